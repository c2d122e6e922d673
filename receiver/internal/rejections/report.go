/*
Copyright 2026 The hookrun Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package rejections

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	agentsv1alpha1 "github.com/hookrun/hookrun/api/v1alpha1"
)

const (
	// writeTimeout bounds one write of the report, which must not depend
	// on the caller (store.CleanupTimeout).
	writeTimeout = 10 * time.Second
	// MaxEntries bounds the lines of a replica's rejection report,
	// shared between the namespaces (shareLines): a line is at most about
	// 1 KiB (namespace, name, two periods of counts), well within the
	// 1 MiB of a ConfigMap.
	MaxEntries = 500
)

// Writer hands this replica's rejection counts to the operator: at
// most once per interval, and only when a count changed, it writes them to
// the replica's own report ConfigMap (agentsv1alpha1.RejectionReportPrefix
// + pod name). The operator adds the reports up into endpoint status; the
// receiver writes no endpoint status. Refusing a call never waits for it.
type Writer struct {
	Counter  *Counter
	Client   client.Client
	Reader   client.Reader
	Key      types.NamespacedName
	Interval time.Duration
	Clock    clock.PassiveClock
	Log      logr.Logger
	// until, if set, ends the reports instead of the manager's stop: it is
	// closed when the receive route has drained, so that the calls refused
	// while the replica drains are reported too.
	Until <-chan struct{}
}

// NeedLeaderElection: every replica reports its own counts.
func (w *Writer) NeedLeaderElection() bool { return false }

// Start restores the counts of the report this replica wrote before a
// restart, then writes the report at every multiple of the interval (so the
// replicas write at about the same moment, and the operator writes an
// endpoint's status once for all of them) until the receive route has
// drained (until; else until ctx ends), and once more then.
func (w *Writer) Start(ctx context.Context) error {
	w.restore(ctx)
	stop := ctx.Done()
	if w.Until != nil {
		stop = w.Until
	}
	// The writes go on while the route drains, after ctx ended (write
	// bounds itself with writeTimeout).
	ctx = context.WithoutCancel(ctx)
	for {
		now := time.Now()
		timer := time.NewTimer(now.Truncate(w.Interval).Add(w.Interval).Sub(now))
		select {
		case <-stop:
			timer.Stop()
			// The counts since the last report, before the replica goes.
			w.logError(w.flush(ctx))
			return nil
		case <-timer.C:
		}
		w.logError(w.flush(ctx))
	}
}

func (w *Writer) logError(err error) {
	if err != nil {
		w.Log.Error(err, "writing the rejection report", "configMap", w.Key.String())
	}
}

// flush writes the report if a count changed since the last one.
func (w *Writer) flush(ctx context.Context) error {
	now := w.Clock.Now()
	lines, changed := w.Counter.take(now, MaxEntries)
	if !changed {
		return nil
	}
	cm, err := w.report(lines, now)
	if err == nil {
		err = w.write(ctx, cm)
	}
	if err != nil {
		w.Counter.markChanged() // the next tick tries again
		return err
	}
	return nil
}

// report is the ConfigMap holding lines.
func (w *Writer) report(lines []reportLine, now time.Time) (*corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   w.Key.Namespace,
			Name:        w.Key.Name,
			Labels:      map[string]string{agentsv1alpha1.LabelRejectionReport: "true"},
			Annotations: map[string]string{agentsv1alpha1.AnnotationReportWrittenAt: now.UTC().Format(time.RFC3339)},
		},
		Data: make(map[string]string, len(lines)),
	}
	for i := range lines {
		entry := lines[i].entry.reportEntry()
		v, err := entry.Encode()
		if err != nil {
			return nil, fmt.Errorf("encoding the rejections of endpoint %s/%s: %w", entry.Namespace, entry.Name, err)
		}
		cm.Data[string(lines[i].uid)] = v
	}
	return cm, nil
}

// write replaces the report (the replica is its only writer; the operator
// only deletes it once nothing in it counts), creating it if it is not there.
func (w *Writer) write(ctx context.Context, cm *corev1.ConfigMap) error {
	ctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	err := w.Client.Update(ctx, cm)
	if apierrors.IsNotFound(err) {
		cm.ResourceVersion = ""
		err = w.Client.Create(ctx, cm)
	}
	if err != nil {
		return fmt.Errorf("writing ConfigMap %s: %w", w.Key, err)
	}
	return nil
}

// restore reads the report this replica wrote before it restarted, if any,
// so that a restart does not lose its counts. It is best effort: a report
// that cannot be read is written anew.
func (w *Writer) restore(ctx context.Context) {
	cm := &corev1.ConfigMap{}
	if err := w.Reader.Get(ctx, w.Key, cm); err != nil {
		if !apierrors.IsNotFound(err) {
			w.Log.Error(err, "reading the rejection report written before a restart", "configMap", w.Key.String())
		}
		return
	}
	for uid, v := range cm.Data {
		entry, err := agentsv1alpha1.DecodeRejectionReportEntry(v)
		if err != nil {
			continue
		}
		w.Counter.restore(types.UID(uid), entry)
	}
}
