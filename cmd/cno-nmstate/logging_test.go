package main

import (
	"errors"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
)

// Only the error a leader's own stop causes is dropped, through names and
// values too.
func TestQuietStop(t *testing.T) {
	var logged []string
	inner := funcr.New(func(prefix, args string) { logged = append(logged, prefix+" "+args) }, funcr.Options{})
	log := logr.New(quietStop{inner.GetSink()}).WithName("manager").WithValues("k", "v")

	log.Error(errors.New("leader election lost"), "error received after stop sequence was engaged")
	assert.Empty(t, logged)

	log.Error(errors.New("leader election lost"), "problem running manager")
	log.Error(errors.New("context canceled"), "error received after stop sequence was engaged")
	log.Info("Successfully acquired lease")
	assert.Len(t, logged, 3)
}
