//go:build tools

// Package tools pins gremlins, the mutation tester `make mutation` runs on
// pkg/nmstate. It is a module of its own so that none of gremlins'
// dependencies reach the library's go.mod.
package tools

import (
	_ "github.com/go-gremlins/gremlins/cmd/gremlins"
)
