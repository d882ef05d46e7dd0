// Package nmstate is the part of the Cluster Network Operator that delivers
// kubernetes-nmstate: it reads spec.kubernetesNMState from the Network operator
// config and the cluster's Infrastructure, decides whether the nmstate CRDs and
// handler should run, renders them from bindata with CNO's template renderer
// and turns what it observes into KubernetesNMState* status conditions.
//
// Render is the one entry point: CNO's Render, the host in pkg/controller
// and `cno-nmstate render` all call it with an Input. Everything here is a
// pure function of its arguments: no client, no environment (except
// ImagesFromEnv), no clock. The caller owns reading from and writing to the
// API server; pkg/clusterstate holds the reads.
package nmstate
