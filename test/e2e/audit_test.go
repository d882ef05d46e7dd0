package e2e

// RBAC from the truth: what upstream's binaries asked the API server for, as
// its audit log recorded it, against what the rendered roles grant.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/cno-nmstate/cno-nmstate/pkg/nmstate"
)

// auditEvent is the part of an audit.k8s.io/v1 Event the checks read.
type auditEvent struct {
	Stage string `json:"stage"`
	Verb  string `json:"verb"`
	User  struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		APIGroup    string `json:"apiGroup"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	RequestURI string `json:"requestURI"`
	UserAgent  string `json:"userAgent"`

	// Who the request acted as, when it impersonated, and when it came.
	ImpersonatedUser *struct {
		Username string   `json:"username"`
		Groups   []string `json:"groups"`
	} `json:"impersonatedUser"`
	RequestReceivedTimestamp time.Time `json:"requestReceivedTimestamp"`
}

// permission is one verb on one resource, as RBAC and the audit log name it.
type permission struct {
	account, verb, group, resource string
}

func (p permission) String() string {
	group := p.group
	if group == "" {
		group = "core"
	}
	return fmt.Sprintf("`%s` `%s` `%s/%s`", p.account, p.verb, group, p.resource)
}

func readAudit(path string) ([]auditEvent, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening the audit log: %w", err)
	}
	defer f.Close()
	var out []auditEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e auditEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("parsing an audit event: %w", err)
		}
		out = append(out, e)
	}
	return out, sc.Err()
}

// requireOperandRBACFromAudit: no request of the given operand service
// accounts (those whose binary the test ran) was forbidden, and every
// permission the rendered roles grant them was used or is explained in
// docs/security.md.
func (k *cluster) requireOperandRBACFromAudit(accounts ...string) {
	t := k.t
	t.Helper()
	require.NotEmpty(t, accounts, "no account to check")
	require.NotEmpty(t, k.dc.AuditLog, "the cluster was started without an audit log")
	events, err := readAudit(k.dc.AuditLog)
	require.NoError(t, err)

	used := map[permission]bool{}
	requests := 0
	for _, e := range events {
		account, ok := operandAccount(accounts, e.User.Username)
		if !ok || e.ObjectRef == nil || e.Stage == "RequestReceived" {
			continue
		}
		requests++
		if e.ResponseStatus != nil {
			assert.NotEqual(t, 403, e.ResponseStatus.Code, "%s was forbidden to %s %s", account, e.Verb, e.RequestURI)
		}
		res := e.ObjectRef.Resource
		if e.ObjectRef.Subresource != "" {
			res += "/" + e.ObjectRef.Subresource
		}
		used[permission{account, e.Verb, e.ObjectRef.APIGroup, res}] = true
	}
	require.Positive(t, requests, "no request of the operands' service accounts is in the audit log")

	explained := map[string]bool{}
	for line := range unusedInDocs(t) {
		for _, a := range accounts {
			if strings.HasPrefix(line, "`"+a+"` ") {
				explained[line] = true
			}
		}
	}
	granted := k.grantedPermissions(accounts)
	var unexplained []string
	for _, p := range granted {
		switch {
		case used[p] && explained[p.String()]:
			t.Errorf("docs/security.md says %s is not exercised, but the audit log shows it used", p)
		case !used[p] && !explained[p.String()]:
			unexplained = append(unexplained, p.String())
		}
	}
	sort.Strings(unexplained)
	assert.Empty(t, unexplained, "granted but neither used in this run nor explained in docs/security.md's list of permissions the tests do not exercise")
	for line := range explained {
		found := false
		for _, p := range granted {
			found = found || p.String() == line
		}
		assert.True(t, found, "docs/security.md explains %s, which the rendered roles do not grant", line)
	}
}

func operandAccount(accounts []string, username string) (string, bool) {
	for _, a := range accounts {
		if username == "system:serviceaccount:"+nmstate.Namespace+":"+a {
			return a, true
		}
	}
	return "", false
}

// grantedPermissions expands the roles bound to the given operand accounts
// on the server into single permissions.
func (k *cluster) grantedPermissions(operandAccounts []string) []permission {
	t := k.t
	t.Helper()
	var out []permission
	seen := map[permission]bool{}
	add := func(account string, rules []rbacv1.PolicyRule) {
		for _, r := range rules {
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					for _, v := range r.Verbs {
						p := permission{account, v, g, res}
						if !seen[p] {
							seen[p] = true
							out = append(out, p)
						}
					}
				}
			}
		}
	}
	accounts := func(subjects []rbacv1.Subject) []string {
		var names []string
		for _, s := range subjects {
			if s.Kind == "ServiceAccount" && s.Namespace == nmstate.Namespace {
				if _, ok := operandAccount(operandAccounts, "system:serviceaccount:"+s.Namespace+":"+s.Name); ok {
					names = append(names, s.Name)
				}
			}
		}
		return names
	}
	crbs := &rbacv1.ClusterRoleBindingList{}
	require.NoError(t, k.c.List(k.ctx(), crbs))
	for _, b := range crbs.Items {
		for _, a := range accounts(b.Subjects) {
			role := &rbacv1.ClusterRole{}
			require.NoError(t, k.c.Get(k.ctx(), client.ObjectKey{Name: b.RoleRef.Name}, role))
			add(a, role.Rules)
		}
	}
	rbs := &rbacv1.RoleBindingList{}
	require.NoError(t, k.c.List(k.ctx(), rbs))
	for _, b := range rbs.Items {
		for _, a := range accounts(b.Subjects) {
			var rules []rbacv1.PolicyRule
			if b.RoleRef.Kind == "ClusterRole" {
				role := &rbacv1.ClusterRole{}
				require.NoError(t, k.c.Get(k.ctx(), client.ObjectKey{Name: b.RoleRef.Name}, role))
				rules = role.Rules
			} else {
				role := &rbacv1.Role{}
				require.NoError(t, k.c.Get(k.ctx(), client.ObjectKey{Namespace: b.Namespace, Name: b.RoleRef.Name}, role))
				rules = role.Rules
			}
			add(a, rules)
		}
	}
	require.NotEmpty(t, out, "no role is bound to the operands' accounts")
	return out
}

var docPermission = regexp.MustCompile("^- (`[^`]+` `[^`]+` `[^`]+`):")

// unusedInDocs reads the list under docs/security.md's heading
// "Granted but not exercised by the tests".
func unusedInDocs(t require.TestingT) map[string]bool {
	b, err := os.ReadFile("../../docs/security.md")
	require.NoError(t, err)
	out := map[string]bool{}
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "#") {
			in = strings.Contains(line, "Granted but not exercised by the tests")
			continue
		}
		if m := docPermission.FindStringSubmatch(line); in && m != nil {
			out[m[1]] = true
		}
	}
	return out
}
