// Command kubelet-standin does, for one lab node, the part of a kubelet that the fencing lab needs Kubernetes to
// see, and nothing else (it runs no containers):
//
//   - renews the node's Lease kube-node-lease/<node> (created when missing, owned by the Node);
//   - keeps the Node's status: Ready=True with a fresh heartbeat, capacity/allocatable (cpu, memory, pods) so the
//     scheduler binds DaemonSet pods to it, InternalIP/Hostname addresses;
//   - finds the pod the fencing agent DaemonSet made for this node (namespace + label selector, bound here by the
//     scheduler), requests a token for it through TokenRequest (bound to that pod, audience --audience) and writes
//     it atomically to --token-file, again before it expires and whenever the pod changes;
//   - marks that pod Running and Ready (--mark-pod-running), as the kubelet would once the container runs, and
//     finishes the deletion of a terminating one (grace period 0), as the kubelet does once its containers stopped.
//
// It runs with the node's own credentials (system:node:<node>, group system:nodes), so the Node authorizer and
// the NodeRestriction admission plugin hold it to what a kubelet may do. Killing it (the lab's emulated watchdog
// SIGKILLs it with the agent when it resets the node) is how a lab node "loses power": the Lease and the heartbeat
// stop and Kubernetes' node lifecycle controller marks the Node Unknown. SIGTERM or SIGINT end it cleanly.
//
// Logs: one key=value line per event on stderr; steady-state renewals are not logged, failures and recoveries are.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

const leaseNamespace = "kube-node-lease"

type options struct {
	kubeconfig      string
	node            string
	internalIP      string
	leaseDuration   time.Duration
	renewInterval   time.Duration
	statusInterval  time.Duration
	podInterval     time.Duration
	requestTimeout  time.Duration
	maxBackoff      time.Duration
	cpu             resource.Quantity
	memory          resource.Quantity
	pods            resource.Quantity
	podNamespace    string
	podSelector     labels.Selector
	tokenFile       string
	audience        string
	tokenExpiration time.Duration
	markPodRunning  bool
}

func main() {
	opts, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "kubelet-standin: %v (try -h)\n", err)
		os.Exit(2)
	}
	config, err := clientcmd.BuildConfigFromFlags("", opts.kubeconfig)
	if err != nil {
		fmt.Fprintf(os.Stderr, "kubelet-standin: cannot read --kubeconfig %s: %v\n", opts.kubeconfig, err)
		os.Exit(2)
	}
	config.UserAgent = "kubelet-standin/" + opts.node
	config.Timeout = opts.requestTimeout
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		fmt.Fprintf(os.Stderr, "kubelet-standin: cannot build a client: %v\n", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	s := &standin{opts: opts, client: client, log: newLogger(opts.node), now: time.Now}
	s.log.event("started", "server", config.Host, "lease_duration", opts.leaseDuration, "renew_interval",
		opts.renewInterval, "status_interval", opts.statusInterval, "pod_namespace", opts.podNamespace,
		"pod_selector", opts.podSelector.String(), "token_file", opts.tokenFile, "audience", opts.audience)
	s.run(ctx)
	s.log.event("stopped", "reason", "signal")
}

func parseFlags(args []string) (*options, error) {
	fs := flag.NewFlagSet("kubelet-standin", flag.ContinueOnError)
	o := &options{}
	var cpu, memory, pods, selector string
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig with the node's identity (system:node:<node>, group system:nodes)")
	fs.StringVar(&o.node, "node", "", "the Node's name")
	fs.StringVar(&o.internalIP, "internal-ip", "", "the node's InternalIP address (also the agent pod's host and pod IP)")
	fs.DurationVar(&o.leaseDuration, "lease-duration", 40*time.Second, "leaseDurationSeconds written into the node Lease")
	fs.DurationVar(&o.renewInterval, "renew-interval", 2*time.Second, "how often the node Lease is renewed")
	fs.DurationVar(&o.statusInterval, "status-interval", 10*time.Second, "how often the Node status (Ready heartbeat) is written")
	fs.DurationVar(&o.podInterval, "pod-interval", 2*time.Second, "how often the agent pod is looked up (token, pod status)")
	fs.DurationVar(&o.requestTimeout, "request-timeout", 5*time.Second, "time limit of each API request")
	fs.DurationVar(&o.maxBackoff, "max-backoff", 5*time.Second, "longest wait between retries of a failing request")
	fs.StringVar(&cpu, "cpu", "2", "the Node's cpu capacity and allocatable")
	fs.StringVar(&memory, "memory", "4Gi", "the Node's memory capacity and allocatable")
	fs.StringVar(&pods, "pods", "110", "the Node's pod capacity and allocatable")
	fs.StringVar(&o.podNamespace, "pod-namespace", "", "namespace of the agent pod (empty: no token, no pod status)")
	fs.StringVar(&selector, "pod-selector", "", "label selector of the agent pod, e.g. app.kubernetes.io/name=fencing-agent")
	fs.StringVar(&o.tokenFile, "token-file", "", "where the agent pod's token goes (written atomically, mode 0600)")
	fs.StringVar(&o.audience, "audience", "fencing-agent", "audience of the requested token")
	fs.DurationVar(&o.tokenExpiration, "token-expiration", time.Hour, "requested token lifetime; renewed at 80 % of the granted one")
	fs.BoolVar(&o.markPodRunning, "mark-pod-running", true, "mark the agent pod Running and Ready in its status")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if o.kubeconfig == "" || o.node == "" || o.internalIP == "" {
		return nil, errors.New("--kubeconfig, --node and --internal-ip are required")
	}
	for name, d := range map[string]time.Duration{"--renew-interval": o.renewInterval,
		"--status-interval": o.statusInterval, "--pod-interval": o.podInterval,
		"--request-timeout": o.requestTimeout, "--max-backoff": o.maxBackoff} {
		if d <= 0 {
			return nil, fmt.Errorf("%s must be positive, got %s", name, d)
		}
	}
	if o.leaseDuration < time.Second || o.leaseDuration <= o.renewInterval {
		return nil, fmt.Errorf("--lease-duration %s must be at least 1s and longer than --renew-interval %s",
			o.leaseDuration, o.renewInterval)
	}
	if o.tokenExpiration < 10*time.Minute {
		return nil, fmt.Errorf("--token-expiration %s: the API server refuses tokens shorter than 10m", o.tokenExpiration)
	}
	for name, q := range map[string]struct {
		text string
		into *resource.Quantity
	}{"--cpu": {cpu, &o.cpu}, "--memory": {memory, &o.memory}, "--pods": {pods, &o.pods}} {
		parsed, err := resource.ParseQuantity(q.text)
		if err != nil || parsed.Sign() <= 0 {
			return nil, fmt.Errorf("%s wants a positive quantity, got %q", name, q.text)
		}
		*q.into = parsed
	}
	if o.podNamespace != "" {
		if selector == "" || o.tokenFile == "" {
			return nil, errors.New("--pod-namespace needs --pod-selector and --token-file")
		}
		parsed, err := labels.Parse(selector)
		if err != nil {
			return nil, fmt.Errorf("--pod-selector %q: %v", selector, err)
		}
		o.podSelector = parsed
	} else if selector != "" || o.tokenFile != "" {
		return nil, errors.New("--pod-selector and --token-file need --pod-namespace")
	} else {
		o.podSelector = labels.Nothing()
	}
	return o, nil
}

// ---- the three loops ----------------------------------------------------------------------------------------------

type standin struct {
	opts   *options
	client kubernetes.Interface
	log    *logger
	now    func() time.Time

	nodeSeen bool // the Node status loop has read the Node once

	// the agent pod's current token, to know when a new one is due
	tokenPodUID  types.UID
	tokenRenewAt time.Time
	// the pod whose status this process already marked Running
	markedPodUID types.UID
	// "agent-pod-waiting" is logged once per stretch without a pod
	waitLogged bool
}

func (s *standin) run(ctx context.Context) {
	var wg sync.WaitGroup
	loops := []struct {
		name     string
		interval time.Duration
		step     func(context.Context) error
	}{
		{"node-status", s.opts.statusInterval, s.updateNodeStatus},
		{"lease", s.opts.renewInterval, s.renewLease},
	}
	if s.opts.podNamespace != "" {
		loops = append(loops, struct {
			name     string
			interval time.Duration
			step     func(context.Context) error
		}{"agent-pod", s.opts.podInterval, s.syncAgentPod})
	}
	for _, l := range loops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.loop(ctx, l.name, l.interval, l.step)
		}()
	}
	wg.Wait()
}

// loop runs step every interval until ctx ends; a failing step is retried with exponential backoff (200 ms up to
// --max-backoff, with jitter), and only the first failure of a streak and the recovery are logged.
func (s *standin) loop(ctx context.Context, name string, interval time.Duration, step func(context.Context) error) {
	failures := 0
	for {
		callCtx, cancel := context.WithTimeout(ctx, s.opts.requestTimeout)
		err := step(callCtx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		wait := interval
		if err != nil {
			failures++
			if failures == 1 {
				s.log.event(name+"-failed", "error", err.Error())
			}
			wait = backoff(failures, s.opts.maxBackoff)
		} else if failures > 0 {
			s.log.event(name+"-recovered", "failures", failures)
			failures = 0
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

func backoff(failures int, max time.Duration) time.Duration {
	d := 200 * time.Millisecond
	for i := 1; i < failures && d < max; i++ {
		d *= 2
	}
	if d > max {
		d = max
	}
	return d/2 + rand.N(d/2+1)
}

// ---- the Node -----------------------------------------------------------------------------------------------------

func (s *standin) updateNodeStatus(ctx context.Context) error {
	node, err := s.client.CoreV1().Nodes().Get(ctx, s.opts.node, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get node: %w", err)
	}
	first := !s.nodeSeen
	s.nodeSeen = true
	now := metav1.NewTime(s.now())
	conditions := []corev1.NodeCondition{
		condition(node, corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "kubelet-standin is posting ready status", now),
		condition(node, corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet-standin has sufficient memory available", now),
		condition(node, corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet-standin has no disk pressure", now),
		condition(node, corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet-standin has sufficient PID available", now),
	}
	resources := corev1.ResourceList{corev1.ResourceCPU: s.opts.cpu, corev1.ResourceMemory: s.opts.memory,
		corev1.ResourcePods: s.opts.pods}
	patch := map[string]any{"status": map[string]any{
		"conditions":  conditions,
		"capacity":    resources,
		"allocatable": resources,
		"addresses": []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: s.opts.internalIP},
			{Type: corev1.NodeHostName, Address: s.opts.node}},
		"nodeInfo": map[string]any{"kubeletVersion": "kubelet-standin", "operatingSystem": "linux",
			"architecture": "amd64"},
	}}
	body, err := json.Marshal(patch)
	if err != nil {
		return fmt.Errorf("encode node status: %w", err)
	}
	if _, err := s.client.CoreV1().Nodes().PatchStatus(ctx, s.opts.node, body); err != nil {
		return fmt.Errorf("patch node status: %w", err)
	}
	if first || readyStatus(node) != corev1.ConditionTrue {
		s.log.event("node-ready", "was", string(readyStatus(node)))
	}
	return nil
}

// condition keeps lastTransitionTime while the status stays what it was, as the kubelet does.
func condition(node *corev1.Node, t corev1.NodeConditionType, status corev1.ConditionStatus, reason, message string,
	now metav1.Time) corev1.NodeCondition {
	transition := now
	for _, c := range node.Status.Conditions {
		if c.Type == t && c.Status == status && !c.LastTransitionTime.IsZero() {
			transition = c.LastTransitionTime
		}
	}
	return corev1.NodeCondition{Type: t, Status: status, Reason: reason, Message: message,
		LastHeartbeatTime: now, LastTransitionTime: transition}
}

func readyStatus(node *corev1.Node) corev1.ConditionStatus {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status
		}
	}
	return "Missing"
}

// ---- the Lease ----------------------------------------------------------------------------------------------------

func (s *standin) renewLease(ctx context.Context) error {
	leases := s.client.CoordinationV1().Leases(leaseNamespace)
	now := metav1.NewMicroTime(s.now())
	seconds := int32(s.opts.leaseDuration / time.Second)
	lease, err := leases.Get(ctx, s.opts.node, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		node, err := s.client.CoreV1().Nodes().Get(ctx, s.opts.node, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("get node (the lease's owner): %w", err)
		}
		owner := node.UID
		lease = &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: s.opts.node, Namespace: leaseNamespace,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: s.opts.node,
					UID: owner}}},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &s.opts.node, LeaseDurationSeconds: &seconds,
				RenewTime: &now},
		}
		if _, err := leases.Create(ctx, lease, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create lease: %w", err)
		}
		s.log.event("lease-created", "duration_seconds", seconds)
		return nil
	}
	if err != nil {
		return fmt.Errorf("get lease: %w", err)
	}
	lease.Spec.HolderIdentity = &s.opts.node
	lease.Spec.LeaseDurationSeconds = &seconds
	lease.Spec.RenewTime = &now
	if _, err := leases.Update(ctx, lease, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("renew lease: %w", err)
	}
	return nil
}

// ---- the agent pod ------------------------------------------------------------------------------------------------

func (s *standin) syncAgentPod(ctx context.Context) error {
	list, err := s.client.CoreV1().Pods(s.opts.podNamespace).List(ctx, metav1.ListOptions{
		LabelSelector: s.opts.podSelector.String(),
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", s.opts.node).String(),
	})
	if err != nil {
		return fmt.Errorf("list agent pods: %w", err)
	}
	for i := range list.Items {
		if err := s.finishDeletion(ctx, &list.Items[i]); err != nil {
			return err
		}
	}
	pod := newestLive(list.Items)
	if pod == nil {
		if !s.waitLogged {
			s.log.event("agent-pod-waiting", "namespace", s.opts.podNamespace, "selector", s.opts.podSelector.String())
			s.waitLogged = true
		}
		return nil
	}
	s.waitLogged = false
	if pod.UID != s.tokenPodUID || !s.now().Before(s.tokenRenewAt) {
		if err := s.writeToken(ctx, pod); err != nil {
			return err
		}
	}
	if s.opts.markPodRunning && (pod.UID != s.markedPodUID || !runningAndReady(pod)) {
		if err := s.markRunning(ctx, pod); err != nil {
			return err
		}
	}
	return nil
}

// finishDeletion removes a pod the API server is deleting (the DaemonSet replaced it, or the node left the group)
// for good, as the kubelet does once its containers stopped: here nothing runs, so at once. The UID precondition
// keeps a pod recreated under the same name.
func (s *standin) finishDeletion(ctx context.Context, pod *corev1.Pod) error {
	if pod.DeletionTimestamp == nil {
		return nil
	}
	zero := int64(0)
	uid := pod.UID
	err := s.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("finish deleting pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	s.log.event("agent-pod-deleted", "pod", pod.Name, "pod_uid", string(pod.UID))
	return nil
}

// newestLive is the newest pod not being deleted: after a DaemonSet replaced the pod, the new one.
func newestLive(pods []corev1.Pod) *corev1.Pod {
	live := make([]corev1.Pod, 0, len(pods))
	for _, p := range pods {
		if p.DeletionTimestamp == nil {
			live = append(live, p)
		}
	}
	if len(live) == 0 {
		return nil
	}
	sort.Slice(live, func(i, j int) bool {
		return live[i].CreationTimestamp.Time.After(live[j].CreationTimestamp.Time)
	})
	return &live[0]
}

func (s *standin) writeToken(ctx context.Context, pod *corev1.Pod) error {
	account := pod.Spec.ServiceAccountName
	if account == "" {
		account = "default"
	}
	seconds := int64(s.opts.tokenExpiration / time.Second)
	request := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		Audiences:         []string{s.opts.audience},
		ExpirationSeconds: &seconds,
		BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID},
	}}
	issued := s.now()
	answer, err := s.client.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(ctx, account, request,
		metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("request token for pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	if err := writeAtomically(s.opts.tokenFile, []byte(answer.Status.Token)); err != nil {
		return err
	}
	expires := answer.Status.ExpirationTimestamp.Time
	s.tokenPodUID = pod.UID
	s.tokenRenewAt = issued.Add(expires.Sub(issued) * 8 / 10)
	s.log.event("token-written", "pod", pod.Name, "pod_uid", string(pod.UID), "service_account", account,
		"expires", expires.UTC().Format(time.RFC3339), "renew_at", s.tokenRenewAt.UTC().Format(time.RFC3339),
		"file", s.opts.tokenFile)
	return nil
}

// writeAtomically replaces file with data (mode 0600) by a rename in the same directory, so a reader sees the old
// token or the new one, never a torn one.
func writeAtomically(file string, data []byte) error {
	dir := filepath.Dir(file)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(file)+".tmp-*")
	if err != nil {
		return fmt.Errorf("create a temporary file in %s: %w", dir, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("chmod %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("close %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), file); err != nil {
		return fmt.Errorf("rename into %s: %w", file, err)
	}
	return nil
}

func runningAndReady(pod *corev1.Pod) bool {
	if pod.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// markRunning writes what the kubelet reports once every container runs: phase Running, the four pod conditions
// True, the host's address as host and pod IP (agent pods use the host network) and one running status per
// container.
func (s *standin) markRunning(ctx context.Context, pod *corev1.Pod) error {
	now := metav1.NewTime(s.now())
	started := now
	if pod.Status.StartTime != nil {
		started = *pod.Status.StartTime
	}
	var conditions []corev1.PodCondition
	for _, t := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodInitialized, corev1.ContainersReady,
		corev1.PodReady} {
		conditions = append(conditions, corev1.PodCondition{Type: t, Status: corev1.ConditionTrue,
			LastTransitionTime: now})
	}
	var containers []corev1.ContainerStatus
	for _, c := range pod.Spec.Containers {
		containers = append(containers, corev1.ContainerStatus{Name: c.Name, Image: c.Image, ImageID: c.Image,
			ContainerID: "standin://" + string(pod.UID) + "/" + c.Name, Ready: true, Started: ptr(true),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}}})
	}
	ips := []corev1.PodIP{{IP: s.opts.internalIP}}
	patch := map[string]any{
		"status": map[string]any{
			"phase": corev1.PodRunning, "conditions": conditions, "containerStatuses": containers,
			"hostIP": s.opts.internalIP, "hostIPs": []corev1.HostIP{{IP: s.opts.internalIP}},
			"podIP": s.opts.internalIP, "podIPs": ips, "startTime": started,
		},
	}
	body, err := json.Marshal(patch)
	if err != nil {
		return fmt.Errorf("encode pod status: %w", err)
	}
	if _, err := s.client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, body,
		metav1.PatchOptions{}, "status"); err != nil {
		return fmt.Errorf("patch status of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	s.markedPodUID = pod.UID
	s.log.event("agent-pod-running", "pod", pod.Name, "pod_uid", string(pod.UID))
	return nil
}

func ptr[T any](v T) *T {
	return &v
}

// ---- logging ------------------------------------------------------------------------------------------------------

type logger struct {
	node string
	mu   sync.Mutex
}

func newLogger(node string) *logger {
	return &logger{node: node}
}

// event writes "ts=… node=… event=… k=v …" as one line; values with spaces or quotes are quoted.
func (l *logger) event(name string, kv ...any) {
	var b strings.Builder
	b.WriteString("ts=")
	b.WriteString(time.Now().UTC().Format("2006-01-02T15:04:05.000Z"))
	b.WriteString(" node=")
	b.WriteString(l.node)
	b.WriteString(" event=")
	b.WriteString(name)
	for i := 0; i+1 < len(kv); i += 2 {
		value := fmt.Sprint(kv[i+1])
		if value == "" || strings.ContainsAny(value, " \"=\t\n") {
			value = fmt.Sprintf("%q", value)
		}
		fmt.Fprintf(&b, " %v=%s", kv[i], value)
	}
	b.WriteByte('\n')
	l.mu.Lock()
	defer l.mu.Unlock()
	os.Stderr.WriteString(b.String())
}
