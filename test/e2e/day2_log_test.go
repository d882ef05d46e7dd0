package e2e

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	configv1 "github.com/openshift/api/config/v1"
	operv1 "github.com/openshift/api/operator/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"

	"github.com/cno-nmstate/cno-nmstate/pkg/controller"
	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

// logLines collects what a host logs, one line per call.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logger() *logr.Logger {
	logger := funcr.New(func(prefix, args string) {
		l.mu.Lock()
		l.lines = append(l.lines, prefix+" "+args)
		l.mu.Unlock()
	}, funcr.Options{})
	return &logger
}

// matching are the lines that contain every one of words.
func (l *logLines) matching(words ...string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range l.lines {
		all := true
		for _, w := range words {
			all = all && strings.Contains(line, w)
		}
		if all {
			out = append(out, line)
		}
	}
	return out
}

// TestHostLogsDecisions (issue 20, item 15): the host logs each decision
// once, when it changes, with its reason, and what it prunes. Before, it
// logged none of them: not the default, not disabling, not the pruning of
// the handler, not stepping aside and for whom.
func TestHostLogsDecisions(t *testing.T) {
	k := startCluster(t, clusterOption{extraCRDs: []string{nmstatesCRD}})
	k.createInfrastructure(configv1.BareMetalPlatformType, ha, ha)
	k.createNetwork(nil)
	logs := &logLines{}
	k.hostLogger = logs.logger()
	reconciles := &reconcileCounter{}
	k.startHost(reconciles.option(), func(o *controller.Options) { o.RecheckInterval = time.Second })
	k.waitExists(&appsv1.DaemonSet{}, nmstate.Namespace, nmstate.HandlerDaemonSet)
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionFalse, nmstate.ReasonDeploying)

	k.patchNetwork(`{"spec":{"kubernetesNMState":{"mode":"Disabled"}}}`)
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionFalse, nmstate.ReasonUserDisabled)
	k.waitGone(&appsv1.DaemonSet{}, nmstate.Namespace, nmstate.HandlerDaemonSet)
	// A few rechecks more: nothing changes, so nothing more is logged.
	for range 3 {
		reconciles.after(t, func() {})
	}

	changed := func(typ, reason string) []string {
		return logs.matching("kubernetes-nmstate condition changed", fmt.Sprintf(`"type"=%q`, typ), fmt.Sprintf(`"reason"=%q`, reason))
	}
	assert.Len(t, changed(nmstate.ConditionAvailable, nmstate.ReasonDeploying), 1, "on by default, deploying: logged once")
	disabled := changed(nmstate.ConditionAvailable, nmstate.ReasonUserDisabled)
	require.Len(t, disabled, 1, "disabled: logged once")
	assert.Contains(t, disabled[0], "disabled by spec.kubernetesNMState.mode", "with its reason in words")
	pruned := logs.matching("pruned what is no longer rendered")
	require.NotEmpty(t, pruned, "the pruning is logged")
	assert.Contains(t, strings.Join(pruned, "\n"), "DaemonSet openshift-nmstate/nmstate-handler")

	k.createAvailableOperator(t)
	k.waitCondition(nmstate.ConditionAvailable, operv1.ConditionFalse, nmstate.ReasonManagedElsewhere)
	aside := changed(nmstate.ConditionAvailable, nmstate.ReasonManagedElsewhere)
	require.Len(t, aside, 1, "stepping aside: logged once")
	assert.Contains(t, aside[0], "the standalone kubernetes-nmstate operator (NMState CR nmstate)", "naming whom for")
}
