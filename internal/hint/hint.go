// Package hint words the did-you-mean of a refused value.
package hint

import (
	"fmt"
	"strings"
)

// Case is the did-you-mean for a value that matches a valid one but for
// case ("baremetal" for "BareMetal"), the usual slip with CamelCase enums;
// "" when no valid value matches. The API's messages (pkg/nmstate) and the
// command line's flag errors share it, so both help the same way.
func Case[T ~string](value string, valid []T) string {
	for _, v := range valid {
		if strings.EqualFold(value, string(v)) {
			return fmt.Sprintf(" (values are case-sensitive: did you mean %q?)", v)
		}
	}
	return ""
}
