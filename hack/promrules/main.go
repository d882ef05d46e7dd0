// Command promrules checks the rule groups of every PrometheusRule in the
// given manifest files (multi-document YAML, "-" for stdin) with
// Prometheus' own rule-file parser: the same checks as a Prometheus loading
// them (PromQL expressions, durations, label names, annotation and label
// templates, unknown fields). It exits 1 naming every problem, 2 on a usage
// or read error, and 0 when every rule is valid.
//
// It is a module of its own so that github.com/prometheus/prometheus never
// reaches the library's go.mod: CNO imports the library, and a library must
// ask its consumer for no module newer than it has.
package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"go.yaml.in/yaml/v3"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: promrules FILE... (\"-\" reads stdin)")
		return 2
	}
	rules, problems := 0, 0
	for _, name := range args {
		data, err := read(name, stdin)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		n, errs := check(data)
		rules += n
		for _, e := range errs {
			fmt.Fprintf(stderr, "%s: %v\n", name, e)
		}
		problems += len(errs)
	}
	if problems > 0 {
		return 1
	}
	if rules == 0 {
		fmt.Fprintln(stderr, "no PrometheusRule rules found")
		return 1
	}
	fmt.Fprintf(stdout, "%d rules valid\n", rules)
	return 0
}

func read(name string, stdin io.Reader) ([]byte, error) {
	if name == "-" {
		data, err := io.ReadAll(stdin)
		if err != nil {
			return nil, fmt.Errorf("reading stdin: %w", err)
		}
		return data, nil
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	return data, nil
}

// check returns the number of rules in data's PrometheusRules and every
// problem Prometheus' parser finds in them.
func check(data []byte) (int, []error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	rules := 0
	var errs []error
	for {
		var doc struct {
			Kind     string `yaml:"kind"`
			Metadata struct {
				Name string `yaml:"name"`
			} `yaml:"metadata"`
			Spec yaml.Node `yaml:"spec"`
		}
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return rules, errs
		}
		if err != nil {
			return rules, append(errs, fmt.Errorf("decoding a manifest: %w", err))
		}
		if doc.Kind != "PrometheusRule" {
			continue
		}
		// spec is a rule file's content: {groups: [...]}.
		content, err := yaml.Marshal(&doc.Spec)
		if err != nil {
			return rules, append(errs, fmt.Errorf("PrometheusRule %s: encoding spec: %w", doc.Metadata.Name, err))
		}
		// The legacy name scheme, the stricter one: names valid under it
		// are valid for every Prometheus version OpenShift ships.
		groups, perrs := rulefmt.Parse(content, false, model.LegacyValidation, parser.NewParser(parser.Options{}), slog.New(slog.DiscardHandler))
		for _, e := range perrs {
			errs = append(errs, fmt.Errorf("PrometheusRule %s: %w", doc.Metadata.Name, e))
		}
		if groups != nil {
			for _, g := range groups.Groups {
				rules += len(g.Rules)
			}
		}
	}
}
