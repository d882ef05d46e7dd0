package nmstate_test

// This file holds the Go code that docs/cno-integration.md asks the Cluster
// Network Operator to add, so that it compiles and runs against this module
// and cannot rot. Every ```go block of that document is a verbatim excerpt of
// this file (TestCNOIntegrationDocMatchesExamples checks it).
//
// CNO's own types are not importable here, so the first section declares
// minimal stand-ins with the same names and shapes: in CNO,
// BootstrapResult is bootstrap.BootstrapResult, FeatureGate is
// featuregates.FeatureGate (library-go), Client is cnoclient.Client and
// SetOperatorCondition is library-go's v1helpers.SetOperatorCondition.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	configv1 "github.com/openshift/api/config/v1"
	operv1 "github.com/openshift/api/operator/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	uns "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	crclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

// ---------------------------------------------------------------------------
// Stand-ins for CNO and library-go types. Only the fields and methods the
// integration code uses are declared.

// InfraStatus stands in for CNO's bootstrap.InfraStatus.
type InfraStatus struct {
	PlatformType           configv1.PlatformType
	ControlPlaneTopology   configv1.TopologyMode
	InfrastructureTopology configv1.TopologyMode
}

// BootstrapResult stands in for CNO's bootstrap.BootstrapResult, with the
// field the integration adds.
type BootstrapResult struct {
	Infra InfraStatus

	KubernetesNMState KubernetesNMStateBootstrapResult
}

// FeatureGate stands in for library-go's featuregates.FeatureGate, whose
// Enabled panics on a gate it does not know.
type FeatureGate interface {
	Enabled(key configv1.FeatureGateName) bool
	KnownFeatures() []configv1.FeatureGateName
}

// ClusterClient and Client stand in for CNO's cnoclient.ClusterClient and
// cnoclient.Client. CNO's CRClient is a direct (uncached) client.
type ClusterClient interface {
	CRClient() crclient.Client
}

type Client interface {
	ClientFor(name string) ClusterClient
}

// SetOperatorCondition stands in for library-go's
// v1helpers.SetOperatorCondition, with the same semantics: add the condition,
// or update reason and message in place and move LastTransitionTime only when
// the status changes.
func SetOperatorCondition(conditions *[]operv1.OperatorCondition, newCondition operv1.OperatorCondition) {
	for i := range *conditions {
		existing := &(*conditions)[i]
		if existing.Type != newCondition.Type {
			continue
		}
		if existing.Status != newCondition.Status {
			existing.Status = newCondition.Status
			existing.LastTransitionTime = newCondition.LastTransitionTime
		}
		existing.Reason = newCondition.Reason
		existing.Message = newCondition.Message
		if existing.LastTransitionTime.IsZero() {
			existing.LastTransitionTime = metav1.NewTime(time.Now())
		}
		return
	}
	if newCondition.LastTransitionTime.IsZero() {
		newCondition.LastTransitionTime = metav1.NewTime(time.Now())
	}
	*conditions = append(*conditions, newCondition)
}

// ---------------------------------------------------------------------------
// pkg/bootstrap/types.go

// KubernetesNMStateBootstrapResult is what Bootstrap reads from the cluster
// for kubernetes-nmstate.
type KubernetesNMStateBootstrapResult struct {
	// Network is network.operator.openshift.io/cluster read as unstructured,
	// so that spec.kubernetesNMState is seen before openshift/api has a typed
	// field for it.
	Network *uns.Unstructured
	// StandaloneOperator is true while the OLM kubernetes-nmstate operator's
	// Deployment or an NMState CR exists.
	StandaloneOperator bool
	// Policies is how many NodeNetworkConfigurationPolicies exist, -1 when
	// the CRD does not.
	Policies int
}

// KubernetesNMStateOutcome is what the operconfig controller hands the
// status manager after each reconcile. It lives in pkg/bootstrap so that the
// status manager need not import pkg/network.
type KubernetesNMStateOutcome struct {
	Decision nmstate.Decision
	// Err stopped the kubernetes-nmstate part of the reconcile: an input
	// error, or applying one of its objects (they carry nmstate.OwnerLabel).
	Err      error
	Policies int
}

// ---------------------------------------------------------------------------
// pkg/network/bootstrap.go

// standaloneNMStateOperatorLabels select the OLM kubernetes-nmstate
// operator's Deployment, in whatever namespace it was installed.
var standaloneNMStateOperatorLabels = crclient.MatchingLabels{"app": "kubernetes-nmstate-operator"}

func kubernetesNMStateBootstrap(ctx context.Context, cl crclient.Reader) (KubernetesNMStateBootstrapResult, error) {
	result := KubernetesNMStateBootstrapResult{Policies: -1}

	network := &uns.Unstructured{}
	network.SetGroupVersionKind(operv1.GroupVersion.WithKind("Network"))
	if err := cl.Get(ctx, types.NamespacedName{Name: "cluster"}, network); err != nil {
		return result, fmt.Errorf("failed to read network.operator.openshift.io/cluster for kubernetes-nmstate: %w", err)
	}
	result.Network = network

	// Metadata only and at most one item: these answer "is there any?".
	operators := &metav1.PartialObjectMetadataList{}
	operators.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("DeploymentList"))
	if err := cl.List(ctx, operators, standaloneNMStateOperatorLabels, crclient.Limit(1)); err != nil {
		return result, fmt.Errorf("failed to look for the standalone kubernetes-nmstate operator: %w", err)
	}
	nmstates := &metav1.PartialObjectMetadataList{}
	nmstates.SetGroupVersionKind(schema.GroupVersionKind{Group: "nmstate.io", Version: "v1", Kind: "NMStateList"})
	if err := cl.List(ctx, nmstates, crclient.Limit(1)); err != nil && !isNoCRD(err) {
		return result, fmt.Errorf("failed to look for NMState CRs: %w", err)
	}
	result.StandaloneOperator = len(operators.Items) > 0 || len(nmstates.Items) > 0

	policies := &metav1.PartialObjectMetadataList{}
	policies.SetGroupVersionKind(schema.GroupVersionKind{Group: "nmstate.io", Version: "v1", Kind: "NodeNetworkConfigurationPolicyList"})
	switch err := cl.List(ctx, policies); {
	case err == nil:
		result.Policies = len(policies.Items)
	case !isNoCRD(err):
		return result, fmt.Errorf("failed to count NodeNetworkConfigurationPolicies: %w", err)
	}
	return result, nil
}

// isNoCRD is true when the kind is not served: its CRD is not installed.
func isNoCRD(err error) bool {
	return meta.IsNoMatchError(err) || apierrors.IsNotFound(err)
}

// bootstrapWithKubernetesNMState shows the call Bootstrap(conf, client) adds,
// beside out.IPTablesAlerter = iptablesAlerterBootstrap(...).
func bootstrapWithKubernetesNMState(client Client) (*BootstrapResult, error) {
	out := &BootstrapResult{}

	var err error
	if out.KubernetesNMState, err = kubernetesNMStateBootstrap(context.TODO(), client.ClientFor("").CRClient()); err != nil {
		return nil, err
	}

	return out, nil
}

// ---------------------------------------------------------------------------
// pkg/network/kubernetes_nmstate.go

// FeatureGateKubernetesNMStateByDefault turns the platform default on. Use
// apifeatures.FeatureGateKubernetesNMStateByDefault once openshift/api
// defines it.
const FeatureGateKubernetesNMStateByDefault configv1.FeatureGateName = "KubernetesNMStateByDefault"

// KubernetesNMStateInputs turns what Bootstrap read and the feature gates
// into the plugin's inputs. Errors are *nmstate.Error (InvalidConfig,
// InvalidInfrastructure).
func KubernetesNMStateInputs(bootstrapResult *BootstrapResult, featureGates FeatureGate) (nmstate.Config, nmstate.Cluster, error) {
	cfg, err := nmstate.ConfigFromNetwork(bootstrapResult.KubernetesNMState.Network)
	if err != nil {
		return nmstate.Config{}, nmstate.Cluster{}, err
	}
	cluster, err := nmstate.ClusterFromInfrastructure(&configv1.Infrastructure{Status: configv1.InfrastructureStatus{
		PlatformStatus:         &configv1.PlatformStatus{Type: bootstrapResult.Infra.PlatformType},
		ControlPlaneTopology:   bootstrapResult.Infra.ControlPlaneTopology,
		InfrastructureTopology: bootstrapResult.Infra.InfrastructureTopology,
	}})
	if err != nil {
		return nmstate.Config{}, nmstate.Cluster{}, err
	}
	cluster.StandaloneOperator = bootstrapResult.KubernetesNMState.StandaloneOperator
	// Enabled panics on a gate the cluster's FeatureGate does not list.
	cluster.DefaultOnGate = slices.Contains(featureGates.KnownFeatures(), FeatureGateKubernetesNMStateByDefault) &&
		featureGates.Enabled(FeatureGateKubernetesNMStateByDefault)
	return cfg, cluster, nil
}

// renderKubernetesNMState renders the kubernetes-nmstate CRDs and operands,
// or nothing when the decision is off. An error stops CNO's whole Render, so
// the status manager deletes nothing: a bad input never tears down a running
// handler.
func renderKubernetesNMState(conf *operv1.NetworkSpec, bootstrapResult *BootstrapResult, manifestDir string, featureGates FeatureGate) ([]*uns.Unstructured, error) {
	cfg, cluster, err := KubernetesNMStateInputs(bootstrapResult, featureGates)
	if err != nil {
		return nil, fmt.Errorf("failed to read the kubernetes-nmstate configuration: %w", err)
	}
	objs, err := nmstate.Render(nmstate.Decide(cfg, cluster), nmstate.ParamsFromEnv(cfg, cluster), manifestDir)
	if err != nil {
		return nil, fmt.Errorf("failed to render kubernetes-nmstate manifests: %w", err)
	}
	return objs, nil
}

// IsKubernetesNMStateCRD is true for the CRDs that hold users' policies. The
// operconfig controller must not set its controller reference on them:
// deleting network.operator/cluster would then garbage-collect the CRDs and
// every policy with them.
func IsKubernetesNMStateCRD(obj *uns.Unstructured) bool {
	return obj.GroupVersionKind().GroupKind() == schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"} &&
		slices.Contains(nmstate.CRDNames, obj.GetName())
}

// NewKubernetesNMStateOutcome recomputes the decision (pure and cheap) and
// keeps the error that stopped the reconcile, if it was the plugin's.
func NewKubernetesNMStateOutcome(bootstrapResult *BootstrapResult, featureGates FeatureGate, reconcileErr error) KubernetesNMStateOutcome {
	out := KubernetesNMStateOutcome{Err: reconcileErr, Policies: bootstrapResult.KubernetesNMState.Policies}
	cfg, cluster, err := KubernetesNMStateInputs(bootstrapResult, featureGates)
	if err != nil {
		out.Err = err
		return out
	}
	out.Decision = nmstate.Decide(cfg, cluster)
	return out
}

// ---------------------------------------------------------------------------
// pkg/controller/statusmanager

// keepCRDs are never deleted by deleteRelatedObjectsNotRendered: their
// deletion would delete every instance.
var keepCRDs = sets.New("frrconfigurations.frrk8s.metallb.io").Insert(nmstate.CRDNames...)

// keptRelatedObject is the check deleteRelatedObjectsNotRendered makes
// before it deletes a related object that is no longer rendered.
func keptRelatedObject(gvk schema.GroupVersionKind, name string) bool {
	return gvk.Group == "apiextensions.k8s.io" && gvk.Kind == "CustomResourceDefinition" && keepCRDs.Has(name)
}

// setKubernetesNMStateConditions merges the three KubernetesNMState*
// conditions into the Network status, as set() merges every condition.
// handler and webhook come from the status manager's DaemonSet and Deployment
// listers (nil when absent), so the conditions follow the rollout.
func setKubernetesNMStateConditions(status *operv1.NetworkStatus, outcome KubernetesNMStateOutcome, handler *appsv1.DaemonSet, webhook *appsv1.Deployment, now time.Time) {
	conditions := nmstate.Conditions(outcome.Decision, outcome.Err, nmstate.Observed{
		Handler:  handler,
		Webhook:  webhook,
		Policies: outcome.Policies,
		Previous: status.Conditions,
		Now:      now,
	})
	for _, c := range conditions {
		SetOperatorCondition(&status.Conditions, c)
	}
}

// ---------------------------------------------------------------------------
// After openshift/api has the typed field

// kubernetesNMStateNetwork gives nmstate.ConfigFromNetwork the typed spec the
// operconfig controller already has, once openshift/api has the typed field,
// instead of the unstructured read in Bootstrap.
func kubernetesNMStateNetwork(conf *operv1.NetworkSpec) (*uns.Unstructured, error) {
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&operv1.Network{Spec: *conf})
	if err != nil {
		return nil, fmt.Errorf("failed to convert the Network spec: %w", err)
	}
	return &uns.Unstructured{Object: obj}, nil
}

// ---------------------------------------------------------------------------
// The examples and tests that run the code above.

// manifestDir is CNO's bindata root (/bindata in its image).
const manifestDir = "../../bindata"

type gates map[configv1.FeatureGateName]bool

func (g gates) Enabled(key configv1.FeatureGateName) bool {
	enabled, known := g[key]
	if !known {
		panic(fmt.Sprintf("feature %q is not registered in FeatureGates", key))
	}
	return enabled
}

func (g gates) KnownFeatures() []configv1.FeatureGateName {
	var out []configv1.FeatureGateName
	for k := range g {
		out = append(out, k)
	}
	return out
}

type clusterClient struct{ c crclient.Client }

func (c clusterClient) CRClient() crclient.Client { return c.c }

type cnoClient struct{ c crclient.Client }

func (c cnoClient) ClientFor(string) ClusterClient { return clusterClient(c) }

func networkObject(spec map[string]any) *uns.Unstructured {
	n := &uns.Unstructured{Object: map[string]any{
		"apiVersion": "operator.openshift.io/v1", "kind": "Network",
		"metadata": map[string]any{"name": "cluster"},
	}}
	if spec != nil {
		n.Object["spec"] = spec
	}
	return n
}

func bareMetal(network *uns.Unstructured) *BootstrapResult {
	return &BootstrapResult{
		Infra: InfraStatus{
			PlatformType:           configv1.BareMetalPlatformType,
			ControlPlaneTopology:   configv1.HighlyAvailableTopologyMode,
			InfrastructureTopology: configv1.HighlyAvailableTopologyMode,
		},
		KubernetesNMState: KubernetesNMStateBootstrapResult{Network: network, Policies: -1},
	}
}

// The render function as CNO's Render calls it: on by default on BareMetal
// once the gate is on, off while the gate is off or unknown.
func Example_renderKubernetesNMState() {
	os.Setenv(nmstate.EnvHandlerImage, "quay.io/openshift/origin-kubernetes-nmstate-handler:latest")
	defer os.Unsetenv(nmstate.EnvHandlerImage)
	br := bareMetal(networkObject(nil))

	for _, fg := range []gates{{FeatureGateKubernetesNMStateByDefault: true}, {FeatureGateKubernetesNMStateByDefault: false}, {}} {
		objs, err := renderKubernetesNMState(&operv1.NetworkSpec{}, br, manifestDir, fg)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("gate %v: %d objects\n", fg, len(objs))
	}
	// Output:
	// gate map[KubernetesNMStateByDefault:true]: 23 objects
	// gate map[KubernetesNMStateByDefault:false]: 0 objects
	// gate map[]: 0 objects
}

// An invalid config stops the render with an *nmstate.Error.
func Example_renderKubernetesNMStateInvalidConfig() {
	br := bareMetal(networkObject(map[string]any{"kubernetesNMState": map[string]any{"mode": "On"}}))
	_, err := renderKubernetesNMState(&operv1.NetworkSpec{}, br, manifestDir, gates{})
	fmt.Println(nmstate.ReasonOf(err))
	fmt.Println(err)
	// Output:
	// InvalidConfig
	// failed to read the kubernetes-nmstate configuration: spec.kubernetesNMState.mode is "On"; valid values are "Enabled" or "Disabled" (or omit it for the platform default)
}

// noNMStateCRDs answers like an API server without the nmstate.io CRDs.
type noNMStateCRDs struct{ crclient.Client }

func (c noNMStateCRDs) List(ctx context.Context, list crclient.ObjectList, opts ...crclient.ListOption) error {
	if gvk := list.GetObjectKind().GroupVersionKind(); gvk.Group == "nmstate.io" {
		return &meta.NoKindMatchError{GroupKind: gvk.GroupKind(), SearchedVersions: []string{gvk.Version}}
	}
	return c.Client.List(ctx, list, opts...)
}

func TestKubernetesNMStateBootstrap(t *testing.T) {
	scheme := runtime.NewScheme()
	require.NoError(t, clientgoscheme.AddToScheme(scheme))
	for _, kind := range []string{"NMState", "NodeNetworkConfigurationPolicy"} {
		gv := schema.GroupVersion{Group: "nmstate.io", Version: "v1"}
		scheme.AddKnownTypeWithName(gv.WithKind(kind), &uns.Unstructured{})
		scheme.AddKnownTypeWithName(gv.WithKind(kind+"List"), &uns.UnstructuredList{})
	}
	nmstateObject := func(kind, name string) *uns.Unstructured {
		return &uns.Unstructured{Object: map[string]any{"apiVersion": "nmstate.io/v1", "kind": kind, "metadata": map[string]any{"name": name}}}
	}
	operator := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{
		Name: "nmstate-operator", Namespace: "openshift-nmstate", Labels: map[string]string{"app": "kubernetes-nmstate-operator"}}}
	network := networkObject(map[string]any{"kubernetesNMState": map[string]any{"mode": "Enabled"}})

	for _, tt := range []struct {
		name       string
		noCRDs     bool
		objs       []crclient.Object
		standalone bool
		policies   int
	}{
		{name: "a new cluster: no nmstate.io CRDs", noCRDs: true, objs: []crclient.Object{network}, policies: -1},
		{name: "the OLM operator's Deployment", noCRDs: true, objs: []crclient.Object{network, operator}, standalone: true, policies: -1},
		{name: "an NMState CR", objs: []crclient.Object{network, nmstateObject("NMState", "nmstate"), nmstateObject("NodeNetworkConfigurationPolicy", "bond0")},
			standalone: true, policies: 1},
		{name: "handed over: policies but no NMState CR", objs: []crclient.Object{network, nmstateObject("NodeNetworkConfigurationPolicy", "bond0"),
			nmstateObject("NodeNetworkConfigurationPolicy", "vlan100")}, policies: 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			objs := make([]crclient.Object, len(tt.objs))
			for i, o := range tt.objs {
				objs[i] = o.DeepCopyObject().(crclient.Object)
			}
			var cl crclient.Client = fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
			if tt.noCRDs {
				cl = noNMStateCRDs{cl}
			}
			br, err := bootstrapWithKubernetesNMState(cnoClient{cl})
			require.NoError(t, err)
			assert.Equal(t, tt.standalone, br.KubernetesNMState.StandaloneOperator)
			assert.Equal(t, tt.policies, br.KubernetesNMState.Policies)
			mode, _, _ := uns.NestedString(br.KubernetesNMState.Network.Object, "spec", "kubernetesNMState", "mode")
			assert.Equal(t, "Enabled", mode)
		})
	}

	t.Run("no Network", func(t *testing.T) {
		cl := fake.NewClientBuilder().WithScheme(scheme).Build()
		_, err := bootstrapWithKubernetesNMState(cnoClient{cl})
		assert.ErrorContains(t, err, "network.operator.openshift.io/cluster")
	})
}

func TestKubernetesNMStateInputs(t *testing.T) {
	br := bareMetal(networkObject(nil))
	br.Infra.ControlPlaneTopology = configv1.ExternalTopologyMode
	br.KubernetesNMState.StandaloneOperator = true
	_, cluster, err := KubernetesNMStateInputs(br, gates{FeatureGateKubernetesNMStateByDefault: true})
	require.NoError(t, err)
	assert.Equal(t, nmstate.Cluster{
		Platform: configv1.BareMetalPlatformType, ControlPlaneTopology: configv1.ExternalTopologyMode,
		InfrastructureTopology: configv1.HighlyAvailableTopologyMode, StandaloneOperator: true, DefaultOnGate: true,
	}, cluster)

	br.Infra.PlatformType = "Mainframe"
	_, _, err = KubernetesNMStateInputs(br, gates{})
	assert.Equal(t, nmstate.ReasonInvalidInfrastructure, nmstate.ReasonOf(err))
}

// The rendered DaemonSet and Deployment are the ones CNO's status manager
// tracks but never waits on.
func TestRenderedWorkloadsAreNonCritical(t *testing.T) {
	t.Setenv(nmstate.EnvHandlerImage, "img")
	objs, err := renderKubernetesNMState(&operv1.NetworkSpec{}, bareMetal(networkObject(nil)), manifestDir, gates{FeatureGateKubernetesNMStateByDefault: true})
	require.NoError(t, err)
	workloads := 0
	for _, obj := range objs {
		if obj.GetKind() != "DaemonSet" && obj.GetKind() != "Deployment" {
			continue
		}
		workloads++
		assert.Contains(t, obj.GetAnnotations(), "networkoperator.openshift.io/non-critical", obj.GetName())
		assert.Equal(t, "stand-alone", obj.GetLabels()["networkoperator.openshift.io/generates-operator-status"], obj.GetName())
		assert.Contains(t, obj.GetAnnotations(), "release.openshift.io/version", obj.GetName())
	}
	assert.Equal(t, 2, workloads)
}

func TestOwnerReferenceAndKeepCRDs(t *testing.T) {
	t.Setenv(nmstate.EnvHandlerImage, "img")
	objs, err := renderKubernetesNMState(&operv1.NetworkSpec{}, bareMetal(networkObject(nil)), manifestDir, gates{FeatureGateKubernetesNMStateByDefault: true})
	require.NoError(t, err)
	var crds []string
	for _, obj := range objs {
		if IsKubernetesNMStateCRD(obj) {
			crds = append(crds, obj.GetName())
		}
		assert.Equal(t, IsKubernetesNMStateCRD(obj), keptRelatedObject(obj.GroupVersionKind(), obj.GetName()), obj.GetName())
	}
	assert.ElementsMatch(t, nmstate.CRDNames, crds)
	assert.True(t, keptRelatedObject(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}, "frrconfigurations.frrk8s.metallb.io"))
}

// The conditions merge into a status that already holds CNO's own, leave
// those alone, and follow the rollout.
func TestSetKubernetesNMStateConditions(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	status := &operv1.NetworkStatus{OperatorStatus: operv1.OperatorStatus{Conditions: []operv1.OperatorCondition{
		{Type: "Available", Status: operv1.ConditionTrue, Reason: "AsExpected", LastTransitionTime: metav1.NewTime(now.Add(-time.Hour))},
	}}}
	outcome := NewKubernetesNMStateOutcome(bareMetal(networkObject(nil)), gates{FeatureGateKubernetesNMStateByDefault: true}, nil)

	setKubernetesNMStateConditions(status, outcome, nil, nil, now)
	byType := map[string]operv1.OperatorCondition{}
	for _, c := range status.Conditions {
		byType[c.Type] = c
	}
	require.Len(t, byType, 4)
	assert.Equal(t, operv1.ConditionTrue, byType["Available"].Status)
	assert.Equal(t, nmstate.ReasonDeploying, byType[nmstate.ConditionProgressing].Reason)

	one := int32(1)
	handler := &appsv1.DaemonSet{Status: appsv1.DaemonSetStatus{DesiredNumberScheduled: 3, UpdatedNumberScheduled: 3, NumberAvailable: 3}}
	webhook := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: &one}, Status: appsv1.DeploymentStatus{UpdatedReplicas: 1, AvailableReplicas: 1}}
	setKubernetesNMStateConditions(status, outcome, handler, webhook, now.Add(time.Minute))
	require.Len(t, status.Conditions, 4)
	for _, c := range status.Conditions {
		if c.Type == nmstate.ConditionAvailable {
			assert.Equal(t, operv1.ConditionTrue, c.Status)
			assert.Equal(t, nmstate.ReasonPlatformDefault, c.Reason)
			assert.Equal(t, now.Add(time.Minute), c.LastTransitionTime.Time)
		}
	}

	// An apply error of one of the plugin's objects is Degraded, and the
	// running handler is kept.
	failed := NewKubernetesNMStateOutcome(bareMetal(networkObject(nil)), gates{FeatureGateKubernetesNMStateByDefault: true}, errors.New("applying DaemonSet: forbidden"))
	setKubernetesNMStateConditions(status, failed, handler, webhook, now.Add(2*time.Minute))
	for _, c := range status.Conditions {
		switch c.Type {
		case nmstate.ConditionDegraded:
			assert.Equal(t, nmstate.ReasonFailed, c.Reason)
		case nmstate.ConditionAvailable:
			assert.Equal(t, nmstate.ReasonKeptDeployed, c.Reason)
		}
	}
}

func TestKubernetesNMStateNetworkFromTypedSpec(t *testing.T) {
	network, err := kubernetesNMStateNetwork(&operv1.NetworkSpec{OperatorSpec: operv1.OperatorSpec{ManagementState: operv1.Managed}})
	require.NoError(t, err)
	cfg, err := nmstate.ConfigFromNetwork(network)
	require.NoError(t, err)
	assert.Equal(t, nmstate.Config{}, cfg, "openshift/api has no typed field yet: the platform default")
}

// Every ```go block of docs/cno-integration.md must be a verbatim excerpt of
// this file, so that what CNO maintainers copy is what compiles here.
func TestCNOIntegrationDocMatchesExamples(t *testing.T) {
	source, err := os.ReadFile("example_cno_integration_test.go")
	require.NoError(t, err)
	doc, err := os.Open("../../docs/cno-integration.md")
	require.NoError(t, err)
	defer doc.Close()

	var blocks []string
	var block []string
	inGo := false
	s := bufio.NewScanner(doc)
	for line := 1; s.Scan(); line++ {
		text := s.Text()
		switch {
		case !inGo && strings.TrimSpace(text) == "```go":
			inGo, block = true, []string{fmt.Sprintf("line %d", line)}
		case inGo && strings.TrimSpace(text) == "```":
			inGo = false
			blocks = append(blocks, strings.Join(block[1:], "\n"))
			assert.Contains(t, string(source), blocks[len(blocks)-1], "the ```go block at %s of docs/cno-integration.md is not in %s", block[0], "example_cno_integration_test.go")
		case inGo:
			block = append(block, text)
		}
	}
	require.NoError(t, s.Err())
	require.False(t, inGo, "unterminated ```go block")
	assert.GreaterOrEqual(t, len(blocks), 5, "docs/cno-integration.md lost its Go snippets")
}
