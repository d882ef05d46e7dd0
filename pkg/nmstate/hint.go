package nmstate

import (
	"fmt"
	"strings"
)

// CaseHint is the did-you-mean for a value that matches a valid one but for
// case ("baremetal" for "BareMetal"), the usual slip with CamelCase enums;
// "" when no valid value matches. The API's messages and the command line's
// flag errors share it, so both help the same way.
func CaseHint[T ~string](value string, valid []T) string {
	for _, v := range valid {
		if strings.EqualFold(value, string(v)) {
			return fmt.Sprintf(" (values are case-sensitive: did you mean %q?)", v)
		}
	}
	return ""
}
