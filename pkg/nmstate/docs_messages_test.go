package nmstate

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operv1 "github.com/openshift/api/operator/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// docScenarios are the situations docs/troubleshooting.md shows, as the
// plugin's own functions report them.
func docScenarios(t *testing.T) [][]operv1.OperatorCondition {
	t.Helper()
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	awsHosted := ha(configv1.AWSPlatformType)
	awsHosted.ControlPlaneTopology = configv1.ExternalTopologyMode
	gateOff := ha(configv1.BareMetalPlatformType)
	gateOff.DefaultOnGate = false
	standalone := ha(configv1.BareMetalPlatformType)
	standalone.ManagedBy = standaloneOperator
	operatorCR := ha(configv1.BareMetalPlatformType)
	operatorCR.ManagedBy = "the standalone kubernetes-nmstate operator (NMState CR nmstate)"
	operatorCR.StandaloneCR = nmstateCR(t, "nodeSelector:\n  node-role.kubernetes.io/worker: \"\"\n"+
		"probeConfiguration:\n  dns:\n    host: root-servers.net\nmetricsConfiguration:\n  bindAddress: \":8089\"\nlogLevel: debug\n")
	otherHandler := ha(configv1.BareMetalPlatformType)
	otherHandler.ManagedBy = "whoever deployed DaemonSet openshift-cnv/nmstate-handler, a kubernetes-nmstate handler the Cluster Network Operator did not render"
	otherHandler.OtherHandler = "openshift-cnv/nmstate-handler"
	idleOther := handler(1, 1, 0, 0, 0)
	idleOther.Namespace, idleOther.Name = "openshift-cnv", "nmstate-handler"
	held := handler(1, 1, 3, 3, 3)
	held.DeletionTimestamp = &metav1.Time{Time: now.Add(-20 * time.Minute)}
	held.Finalizers = []string{"example.com/cleanup"}
	operatorDown := func(replicas int32) *appsv1.Deployment {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "openshift-nmstate", Name: "nmstate-operator"}, Spec: appsv1.DeploymentSpec{Replicas: &replicas},
			Status: appsv1.DeploymentStatus{Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionFalse,
				LastTransitionTime: metav1.NewTime(now.Add(-20 * time.Minute))}}}}
	}
	awsRunning := ha(configv1.AWSPlatformType)
	awsRunning.Deployed, awsRunning.Policies = true, 14

	ready := Observed{WorkloadsKnown: true, Handler: handler(1, 1, 3, 3, 3), Webhook: webhook(2, 2, 2)}
	failedCNO := ready
	failedCNO.RetryAfter = 160 * time.Second
	configErr := func(spec map[string]any) error {
		_, err := ConfigFromNetwork(&unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"kubernetesNMState": spec}}})
		require.Error(t, err)
		return err
	}
	_, missingImage := renderObjects(decideWithCarryOver(Config{}, ha(configv1.BareMetalPlatformType)), renderParams{WebhookReplicas: 1}, manifestDir)
	require.Error(t, missingImage)
	terminating := errors.New(`daemonsets.apps "nmstate-handler" is forbidden: unable to create new content in namespace openshift-nmstate because it is being terminated`)
	gone := errors.New(`namespaces "openshift-nmstate" not found`)
	var applies []error
	for _, o := range []string{"ServiceAccount openshift-nmstate/nmstate-handler", "Role openshift-nmstate/nmstate-handler", "DaemonSet openshift-nmstate/nmstate-handler"} {
		applies = append(applies, fmt.Errorf("applying %s: %w", o, gone))
	}

	enabled := decideWithCarryOver(Config{}, ha(configv1.BareMetalPlatformType))
	disabled := decideWithCarryOver(Config{Mode: ModeDisabled}, ha(configv1.BareMetalPlatformType))
	return [][]operv1.OperatorCondition{
		conditionsFor(enabled, nil, ready),
		conditionsFor(decideWithCarryOver(Config{Mode: ModeEnabled}, awsHosted), nil, ready),
		conditionsFor(decideWithCarryOver(Config{}, ha(configv1.AWSPlatformType)), nil, Observed{WorkloadsKnown: true, Policies: 0}),
		conditionsFor(decideWithCarryOver(Config{}, awsHosted), nil, Observed{WorkloadsKnown: true, Policies: -1}),
		conditionsFor(decideWithCarryOver(Config{}, ha("")), nil, Observed{WorkloadsKnown: true, Policies: -1}),
		conditionsFor(disabled, nil, Observed{WorkloadsKnown: true, Policies: 2}),
		conditionsFor(decideWithCarryOver(Config{}, gateOff), nil, Observed{WorkloadsKnown: true, Policies: 0}),
		conditionsFor(decideWithCarryOver(Config{Mode: ModeEnabled}, standalone), nil, Observed{WorkloadsKnown: true, Policies: 4}),
		conditionsFor(decideWithCarryOver(Config{Mode: ModeEnabled}, operatorCR), nil, Observed{WorkloadsKnown: true, Policies: 4}),
		conditionsFor(decideWithCarryOver(Config{Mode: ModeEnabled}, otherHandler), nil, Observed{WorkloadsKnown: true, Policies: 4}),
		conditionsFor(decideWithCarryOver(Config{Mode: ModeEnabled}, otherHandler), nil, Observed{WorkloadsKnown: true, Policies: 4, OtherHandler: idleOther}),
		conditionsFor(enabled, nil, Observed{WorkloadsKnown: true, Handler: handler(1, 1, 3, 3, 3), Webhook: webhook(2, 2, 2), Now: now, OtherOperator: operatorDown(0), LeftCR: "nmstate"}),
		conditionsFor(enabled, nil, Observed{WorkloadsKnown: true, Handler: handler(1, 1, 3, 3, 3), Webhook: webhook(2, 2, 2), Now: now, OtherOperator: operatorDown(1)}),
		conditionsFor(enabled, nil, Observed{WorkloadsKnown: true, Handler: handler(1, 1, 3, 3, 3), Webhook: webhook(2, 2, 2), Now: now, LeftCR: "nmstate"}),
		conditionsFor(decideWithCarryOver(Config{}, awsRunning), nil, ready),
		conditionsFor(enabled, nil, Observed{WorkloadsKnown: true}),
		conditionsFor(enabled, nil, Observed{WorkloadsKnown: true, Handler: handler(2, 2, 3, 1, 3), Webhook: webhook(2, 2, 2)}),
		conditionsFor(enabled, nil, Observed{WorkloadsKnown: true, Handler: handler(2, 1, 3, 3, 3), Webhook: webhook(2, 2, 0)}),
		conditionsFor(enabled, nil, Observed{WorkloadsKnown: true, Handler: handler(2, 2, 3, 1, 2), Webhook: webhook(2, 2, 1), Now: now,
			Previous: []operv1.OperatorCondition{{Type: ConditionProgressing, Status: operv1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-20 * time.Minute))}}}),
		conditionsFor(enabled, nil, Observed{WorkloadsKnown: true, Handler: handler(1, 1, 0, 0, 0), Webhook: webhook(2, 2, 2)}),
		conditionsFor(disabled, nil, Observed{WorkloadsKnown: true, Handler: handler(1, 1, 3, 3, 3), Webhook: webhook(2, 2, 2), Policies: 1}),
		conditionsFor(disabled, nil, Observed{WorkloadsKnown: true, Pods: 2, Policies: 1}),
		conditionsFor(disabled, nil, Observed{WorkloadsKnown: true, Handler: held, Policies: 1, Now: now,
			Previous: []operv1.OperatorCondition{{Type: ConditionProgressing, Status: operv1.ConditionTrue, Reason: ReasonRemoving, LastTransitionTime: metav1.NewTime(now.Add(-20 * time.Minute))}}}),
		conditionsFor(Decision{}, configErr(map[string]any{"mode": "enabled"}), ready),
		conditionsFor(Decision{}, configErr(map[string]any{"Mode": "Enabled"}), ready),
		conditionsFor(Decision{}, configErr(map[string]any{"handlerPlacement": map[string]any{"nodeSelector": map[string]any{"kubernetes.io/os": "windows"}}}), ready),
		conditionsFor(Decision{}, configErr(map[string]any{"handlerPlacement": map[string]any{"tolerations": []any{map[string]any{"operator": "Equal"}}}}), ready),
		conditionsFor(Decision{}, missingImage, ready),
		// CNO's back-off: the 5th try in a row, past the grace, and the 2nd.
		conditionsFor(enabled, fmt.Errorf("applying DaemonSet openshift-nmstate/nmstate-handler: %w", terminating), failedCNO),
		conditionsFor(enabled, errors.Join(applies...), Observed{WorkloadsKnown: true, RetryAfter: failedCNO.RetryAfter}),
		conditionsFor(enabled, errors.Join(applies...), Observed{WorkloadsKnown: true, Retrying: true, RetryAfter: 20 * time.Second}),
	}
}

// Every message quoted in a reason's section of docs/troubleshooting.md is
// one the plugin writes with that reason, so the page cannot drift from the
// code.
func TestTroubleshootingMessagesAreReal(t *testing.T) {
	written := map[string][]string{}
	for _, conds := range docScenarios(t) {
		for _, c := range conds {
			written[c.Reason] = append(written[c.Reason], c.Message)
		}
	}
	f, err := os.Open("../../docs/troubleshooting.md")
	require.NoError(t, err)
	defer f.Close()
	heading := regexp.MustCompile("^### `([A-Za-z]+)`$")
	reason, inText, quoted := "", false, 0
	s := bufio.NewScanner(f)
	s.Buffer(nil, 1<<20)
	for s.Scan() {
		line := s.Text()
		switch {
		case heading.MatchString(line):
			reason = heading.FindStringSubmatch(line)[1]
		case strings.HasPrefix(line, "## "):
			reason = ""
		case line == "```text":
			inText = true
		case line == "```":
			inText = false
		case inText && reason != "" && line != "":
			quoted++
			assert.Contains(t, written[reason], line, "docs/troubleshooting.md quotes, under %s, a message the plugin does not write; it writes:\n%s",
				reason, strings.Join(written[reason], "\n"))
		}
	}
	require.NoError(t, s.Err())
	assert.GreaterOrEqual(t, quoted, 20, "too few quoted messages found: is the page's layout what this test parses?")
}
