package devcluster

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The annotations OpenShift's service-ca-operator acts on.
const (
	servingCertAnnotation    = "service.beta.openshift.io/serving-cert-secret-name"
	injectCABundleAnnotation = "service.beta.openshift.io/inject-cabundle"
	serviceCAFieldManager    = "service-ca-stand-in"
	// serviceCAKey is the ConfigMap key the operator writes the bundle to.
	serviceCAKey = "service-ca.crt"
)

// ServiceCA stands in for OpenShift's service-ca-operator, another
// operator's job: it signs a serving certificate into the secret a Service's
// annotation names, and injects its CA into the MutatingWebhookConfigurations
// and ConfigMaps that ask for it (a ConfigMap gets it as service-ca.crt, the
// bundle cluster monitoring verifies scrapes with). Nothing else in the
// cluster is stood in for.
type ServiceCA struct {
	c       client.Client
	cert    *x509.Certificate
	key     *ecdsa.PrivateKey
	certPEM []byte
}

// NewServiceCA creates the CA.
func NewServiceCA(c client.Client) (*ServiceCA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating the service CA's key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "openshift-service-serving-signer (stand-in)"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("self-signing the service CA: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parsing the service CA: %w", err)
	}
	return &ServiceCA{c: c, cert: cert, key: key, certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

// Run does the operator's job every interval until ctx ends.
func (s *ServiceCA) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		// Errors are the operator's business: the next pass retries.
		_ = s.Sync(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Sync signs every annotated Service's certificate and injects every
// annotated webhook configuration's and ConfigMap's CA bundle, once.
func (s *ServiceCA) Sync(ctx context.Context) error {
	svcs := &corev1.ServiceList{}
	if err := s.c.List(ctx, svcs); err != nil {
		return fmt.Errorf("listing Services: %w", err)
	}
	for i := range svcs.Items {
		if name := svcs.Items[i].Annotations[servingCertAnnotation]; name != "" {
			if err := s.ensureServingCert(ctx, &svcs.Items[i], name); err != nil {
				return err
			}
		}
	}
	if err := s.injectConfigMaps(ctx); err != nil {
		return err
	}
	hooks := &admissionregistrationv1.MutatingWebhookConfigurationList{}
	if err := s.c.List(ctx, hooks); err != nil {
		return fmt.Errorf("listing MutatingWebhookConfigurations: %w", err)
	}
	for i := range hooks.Items {
		h := &hooks.Items[i]
		if h.Annotations[injectCABundleAnnotation] != "true" {
			continue
		}
		changed := false
		for j := range h.Webhooks {
			if !bytes.Equal(h.Webhooks[j].ClientConfig.CABundle, s.certPEM) {
				h.Webhooks[j].ClientConfig.CABundle = s.certPEM
				changed = true
			}
		}
		if changed {
			if err := s.c.Update(ctx, h, client.FieldOwner(serviceCAFieldManager)); err != nil {
				return fmt.Errorf("injecting the CA bundle into %s: %w", h.Name, err)
			}
		}
	}
	return nil
}

func (s *ServiceCA) injectConfigMaps(ctx context.Context) error {
	cms := &corev1.ConfigMapList{}
	if err := s.c.List(ctx, cms); err != nil {
		return fmt.Errorf("listing ConfigMaps: %w", err)
	}
	for i := range cms.Items {
		cm := &cms.Items[i]
		if cm.Annotations[injectCABundleAnnotation] != "true" || cm.Data[serviceCAKey] == string(s.certPEM) {
			continue
		}
		if cm.Data == nil {
			cm.Data = map[string]string{}
		}
		cm.Data[serviceCAKey] = string(s.certPEM)
		if err := s.c.Update(ctx, cm, client.FieldOwner(serviceCAFieldManager)); err != nil {
			return fmt.Errorf("injecting the CA bundle into ConfigMap %s/%s: %w", cm.Namespace, cm.Name, err)
		}
	}
	return nil
}

func (s *ServiceCA) ensureServingCert(ctx context.Context, svc *corev1.Service, secret string) error {
	err := s.c.Get(ctx, client.ObjectKey{Namespace: svc.Namespace, Name: secret}, &corev1.Secret{})
	if err == nil || !apierrors.IsNotFound(err) {
		return err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generating a serving key: %w", err)
	}
	host := svc.Name + "." + svc.Namespace + ".svc"
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: host},
		DNSNames:     []string{host, host + ".cluster.local"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, s.cert, &key.PublicKey, s.key)
	if err != nil {
		return fmt.Errorf("signing %s's serving certificate: %w", host, err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return fmt.Errorf("encoding %s's serving key: %w", host, err)
	}
	obj := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: svc.Namespace, Name: secret},
		Type:       corev1.SecretTypeTLS,
		Data: map[string][]byte{
			corev1.TLSCertKey:       pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
			corev1.TLSPrivateKeyKey: pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		},
	}
	if err := s.c.Create(ctx, obj, client.FieldOwner(serviceCAFieldManager)); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("writing serving secret %s/%s: %w", svc.Namespace, secret, err)
	}
	return nil
}
