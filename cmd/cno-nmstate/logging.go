package main

import (
	"io"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// setHostLogger sends the host's logs to w, controller-runtime's and
// client-go's (klog: the leader election's among them) alike.
func setHostLogger(w io.Writer, opts ...zap.Opts) {
	logger := logr.New(quietStop{zap.New(append([]zap.Opts{zap.WriteTo(w)}, opts...)...).GetSink()})
	ctrl.SetLogger(logger)
	klog.SetLogger(logger)
}

// quietStop drops the one error controller-runtime v0.24 logs whenever a
// leader stops as asked: the election it has just given up is reported
// lost after the stop began (kubernetes-sigs/controller-runtime#3535). A
// Lease lost while running is not logged there; it ends the manager.
type quietStop struct{ logr.LogSink }

// Init does nothing: zap.New has initialized the wrapped sink.
func (quietStop) Init(logr.RuntimeInfo) {}

func (s quietStop) Error(err error, msg string, keysAndValues ...any) {
	if msg == "error received after stop sequence was engaged" && err != nil && err.Error() == "leader election lost" {
		return
	}
	s.LogSink.Error(err, msg, keysAndValues...)
}

func (s quietStop) WithValues(keysAndValues ...any) logr.LogSink {
	return quietStop{s.LogSink.WithValues(keysAndValues...)}
}

func (s quietStop) WithName(name string) logr.LogSink {
	return quietStop{s.LogSink.WithName(name)}
}
