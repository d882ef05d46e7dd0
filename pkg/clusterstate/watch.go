package clusterstate

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

// HandlerSelector selects kubernetes-nmstate handler DaemonSets, whoever
// deployed them (handlerLabels): what a consumer that re-decides only on
// events and a slow resync (CNO, every 3 minutes) watches, so that it
// re-decides as soon as another manager's handler appears or goes.
func HandlerSelector() labels.Selector {
	return labels.SelectorFromSet(labels.Set(handlerLabels))
}

// OtherHandler reports whether a handler DaemonSet HandlerSelector selected
// is another manager's, not the plugin's own (nmstate.OwnHandler): its creation or
// deletion may change the decision. The plugin's own handler, and any
// update, change nothing OtherManager reads; a consumer that reconciles
// everything on each event (CNO) must not run on every status update of its
// own rollout.
func OtherHandler(obj metav1.Object) bool {
	return !nmstate.OwnHandler(obj)
}
