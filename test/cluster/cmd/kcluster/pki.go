package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// authority is a CA that can sign leaf certificates.
type authority struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newSerial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		panic(err)
	}
	return n
}

func newKey() *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	return k
}

func newAuthority(cn string) (*authority, error) {
	key := newKey()
	tmpl := &x509.Certificate{
		SerialNumber:          newSerial(),
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &authority{cert: cert, key: key}, nil
}

// sign issues a leaf certificate. Server certificates get IP and DNS SANs;
// client certificates carry the user in CN and groups in O.
func (a *authority) sign(cn string, orgs []string, server bool, ips []net.IP, dns []string) ([]byte, *ecdsa.PrivateKey, error) {
	key := newKey()
	usage := x509.ExtKeyUsageClientAuth
	if server {
		usage = x509.ExtKeyUsageServerAuth
	}
	tmpl := &x509.Certificate{
		SerialNumber: newSerial(),
		Subject:      pkix.Name{CommonName: cn, Organization: orgs},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
		IPAddresses:  ips,
		DNSNames:     dns,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, &key.PublicKey, a.key)
	return der, key, err
}

func writePEM(path, typ string, der []byte, mode os.FileMode) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), mode)
}

func writeKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	return writePEM(path, "EC PRIVATE KEY", der, 0o600)
}

func writePublicKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return err
	}
	return writePEM(path, "PUBLIC KEY", der, 0o644)
}

func randomToken() string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// pkiFiles names every credential file the launcher writes into the state
// directory's pki/ folder.
type pkiFiles struct {
	dir                     string
	ServingCA, ClientCA     string // CA certificates (PEM)
	ServingCert, ServingKey string
	AdminCert, AdminKey     string // CN=kube-admin, O=system:masters
	UserCert, UserKey       string // CN=alice (unprivileged)
	SAKey, SAPub            string // service-account signing key pair
	WrongCA                 string // a CA that signed nothing here
	TokenFile               string // static token file
	AdminToken, UserToken   string // the tokens in TokenFile
}

func newPKIFiles(dir string) *pkiFiles {
	p := func(n string) string { return filepath.Join(dir, n) }
	return &pkiFiles{
		dir:       dir,
		ServingCA: p("ca.crt"), ClientCA: p("client-ca.crt"),
		ServingCert: p("apiserver.crt"), ServingKey: p("apiserver.key"),
		AdminCert: p("admin.crt"), AdminKey: p("admin.key"),
		UserCert: p("alice.crt"), UserKey: p("alice.key"),
		SAKey: p("sa.key"), SAPub: p("sa.pub"),
		WrongCA:   p("wrong-ca.crt"),
		TokenFile: p("tokens.csv"),
	}
}

// generate writes a fresh serving CA, client CA, serving cert for 127.0.0.1
// and localhost, client certs, service-account keys and a token file.
func (f *pkiFiles) generate() error {
	if err := os.MkdirAll(f.dir, 0o700); err != nil {
		return err
	}
	servingCA, err := newAuthority("kube-test-serving-ca")
	if err != nil {
		return err
	}
	clientCA, err := newAuthority("kube-test-client-ca")
	if err != nil {
		return err
	}
	wrongCA, err := newAuthority("kube-test-unrelated-ca")
	if err != nil {
		return err
	}
	for path, ca := range map[string]*authority{f.ServingCA: servingCA, f.ClientCA: clientCA, f.WrongCA: wrongCA} {
		if err := writePEM(path, "CERTIFICATE", ca.cert.Raw, 0o644); err != nil {
			return err
		}
	}
	leaf := func(ca *authority, certPath, keyPath, cn string, orgs []string, server bool) error {
		var ips []net.IP
		var dns []string
		if server {
			ips = []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.0.0.1")}
			dns = []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"}
		}
		der, key, err := ca.sign(cn, orgs, server, ips, dns)
		if err != nil {
			return err
		}
		if err := writePEM(certPath, "CERTIFICATE", der, 0o644); err != nil {
			return err
		}
		return writeKey(keyPath, key)
	}
	if err := leaf(servingCA, f.ServingCert, f.ServingKey, "kube-apiserver", nil, true); err != nil {
		return err
	}
	if err := leaf(clientCA, f.AdminCert, f.AdminKey, "kube-admin", []string{"system:masters"}, false); err != nil {
		return err
	}
	if err := leaf(clientCA, f.UserCert, f.UserKey, "alice", nil, false); err != nil {
		return err
	}
	sa := newKey()
	if err := writeKey(f.SAKey, sa); err != nil {
		return err
	}
	if err := writePublicKey(f.SAPub, sa); err != nil {
		return err
	}
	f.AdminToken, f.UserToken = randomToken(), randomToken()
	tokens := fmt.Sprintf("%s,kube-admin-token,uid-admin,\"system:masters\"\n%s,alice,uid-alice\n", f.AdminToken, f.UserToken)
	return os.WriteFile(f.TokenFile, []byte(tokens), 0o600)
}
