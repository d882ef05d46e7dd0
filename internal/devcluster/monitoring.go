package devcluster

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// monitoringCRDFiles are the ServiceMonitor and PrometheusRule CRDs, which
// `make generate` writes from the prometheus-operator module that
// hack/tools/monitoring pins. OpenShift's cluster-monitoring operator
// installs them on a real cluster; every cluster here gets them, since the
// plugin renders both kinds whenever it is on.
//
//go:embed crds/*.yaml
var monitoringCRDFiles embed.FS

func monitoringCRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	paths, err := fs.Glob(monitoringCRDFiles, "crds/*.yaml")
	if err != nil {
		return nil, fmt.Errorf("finding the monitoring CRDs: %w", err)
	}
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, p := range paths {
		data, err := monitoringCRDFiles.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", p, err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			return nil, fmt.Errorf("decoding %s: %w", p, err)
		}
		out = append(out, crd)
	}
	if len(out) == 0 {
		return nil, errors.New("no monitoring CRDs embedded (run `make generate`)")
	}
	return out, nil
}
