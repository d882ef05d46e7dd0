package main

import (
	"reflect"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/cno-nmstate/cno-nmstate/pkg/controller"
)

// The baseline drops all of the host's scoping: should CacheOptions scope
// by another field one day, this fails until withoutScoping drops it too.
func TestWithoutScopingLeavesTheDefaultCache(t *testing.T) {
	if got := withoutScoping(controller.CacheOptions()); !reflect.DeepEqual(got, cache.Options{}) {
		t.Fatalf("withoutScoping(controller.CacheOptions()) = %+v, want controller-runtime's defaults (the zero cache.Options)", got)
	}
}
