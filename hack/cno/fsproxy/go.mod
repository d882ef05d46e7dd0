module github.com/cno-nmstate/cno-nmstate/hack/cno/fsproxy

go 1.26.0

require golang.org/x/mod v0.33.0
