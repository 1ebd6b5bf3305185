// Writes the golden JSON files of the kube-scheduler extender messages that gpupool's Java tests
// compare against, with Go's encoding/json, from the extender/v1 types.
//
// The extender types below have the field names and types of k8s.io/kube-scheduler/extender/v1
// (types.go); the core/v1 types are reduced to the fields these messages use, with the JSON tags of
// k8s.io/api/core/v1 and k8s.io/apimachinery (metav1.Time marshals a zero time as null). No module
// download is needed: `go run .` in this folder (Go 1.19+) rewrites ../../resources/extender-golden.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// ---- k8s.io/kube-scheduler/extender/v1 ----

const (
	MinExtenderPriority int64 = 0
	MaxExtenderPriority int64 = 10
)

type ExtenderPreemptionResult struct {
	NodeNameToMetaVictims map[string]*MetaVictims
}

type ExtenderPreemptionArgs struct {
	Pod                   *Pod
	NodeNameToVictims     map[string]*Victims
	NodeNameToMetaVictims map[string]*MetaVictims
}

type Victims struct {
	Pods             []*Pod
	NumPDBViolations int64
}

type MetaPod struct {
	UID string
}

type MetaVictims struct {
	Pods             []*MetaPod
	NumPDBViolations int64
}

type ExtenderArgs struct {
	Pod       *Pod
	Nodes     *NodeList
	NodeNames *[]string
}

type FailedNodesMap map[string]string

type ExtenderFilterResult struct {
	Nodes                      *NodeList
	NodeNames                  *[]string
	FailedNodes                FailedNodesMap
	FailedAndUnresolvableNodes FailedNodesMap
	Error                      string
}

type ExtenderBindingArgs struct {
	PodName      string
	PodNamespace string
	PodUID       UID
	Node         string
}

type ExtenderBindingResult struct {
	Error string
}

type HostPriority struct {
	Host  string
	Score int64
}

type HostPriorityList []HostPriority

// ---- k8s.io/apimachinery, k8s.io/api/core/v1 (the fields used here) ----

type UID string

// Time is metav1.Time: a zero time marshals as null.
type Time struct{ s string }

func (t Time) MarshalJSON() ([]byte, error) {
	if t.s == "" {
		return []byte("null"), nil
	}
	return json.Marshal(t.s)
}

func (t *Time) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		t.s = ""
		return nil
	}
	return json.Unmarshal(b, &t.s)
}

type TypeMeta struct {
	Kind       string `json:"kind,omitempty"`
	APIVersion string `json:"apiVersion,omitempty"`
}

type ObjectMeta struct {
	Name              string            `json:"name,omitempty"`
	Namespace         string            `json:"namespace,omitempty"`
	UID               UID               `json:"uid,omitempty"`
	CreationTimestamp Time              `json:"creationTimestamp,omitempty"`
	Labels            map[string]string `json:"labels,omitempty"`
	Annotations       map[string]string `json:"annotations,omitempty"`
}

type ListMeta struct {
	ResourceVersion string `json:"resourceVersion,omitempty"`
}

type ResourceList map[string]string

type ResourceRequirements struct {
	Limits   ResourceList `json:"limits,omitempty"`
	Requests ResourceList `json:"requests,omitempty"`
}

type Container struct {
	Name      string               `json:"name"`
	Image     string               `json:"image,omitempty"`
	Resources ResourceRequirements `json:"resources,omitempty"`
}

type PodSpec struct {
	Containers    []Container `json:"containers"`
	NodeName      string      `json:"nodeName,omitempty"`
	SchedulerName string      `json:"schedulerName,omitempty"`
}

type PodStatus struct {
	Phase string `json:"phase,omitempty"`
}

type Pod struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata,omitempty"`
	Spec       PodSpec   `json:"spec,omitempty"`
	Status     PodStatus `json:"status,omitempty"`
}

type NodeSpec struct {
	Unschedulable bool `json:"unschedulable,omitempty"`
}

type NodeStatus struct {
	Capacity    ResourceList `json:"capacity,omitempty"`
	Allocatable ResourceList `json:"allocatable,omitempty"`
}

type Node struct {
	TypeMeta   `json:",inline"`
	ObjectMeta `json:"metadata,omitempty"`
	Spec       NodeSpec   `json:"spec,omitempty"`
	Status     NodeStatus `json:"status,omitempty"`
}

type NodeList struct {
	TypeMeta `json:",inline"`
	ListMeta `json:"metadata"`
	Items    []Node `json:"items"`
}

// ---- the scenario the Java tests use ----

func gpuPod() *Pod {
	return &Pod{
		ObjectMeta: ObjectMeta{Name: "train-0", Namespace: "vision", UID: "6f1c2f0e-0000-4000-8000-000000000001"},
		Spec: PodSpec{SchedulerName: "default-scheduler", Containers: []Container{{
			Name: "main", Image: "pytorch",
			Resources: ResourceRequirements{Limits: ResourceList{"nvidia.com/gpu": "1", "nvidia.com/gpumem": "20000", "nvidia.com/gpucores": "30"}},
		}}},
	}
}

func gfdNode(name string, gpus string) Node {
	return Node{
		ObjectMeta: ObjectMeta{Name: name, Labels: map[string]string{
			"nvidia.com/gpu.count": gpus, "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB", "nvidia.com/gpu.memory": "81920"}},
		Status: NodeStatus{Allocatable: ResourceList{"nvidia.com/gpu": gpus}},
	}
}

func cpuNode(name string) Node {
	return Node{ObjectMeta: ObjectMeta{Name: name}, Status: NodeStatus{Allocatable: ResourceList{"cpu": "16"}}}
}

func victim(name, uid string) *Pod {
	p := gpuPod()
	p.Name, p.UID, p.Spec.NodeName = name, UID(uid), "gpu-a"
	p.Status.Phase = "Running"
	return p
}

func write(dir, name string, v interface{}) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), append(b, '\n'), 0o644); err != nil {
		panic(err)
	}
}

// decodeAgain decodes input the way an extender written in Go would, and writes what it understood.
func decodeAgain(dir, name, input string, v interface{}) {
	if err := os.WriteFile(filepath.Join(dir, name+".input.json"), []byte(input+"\n"), 0o644); err != nil {
		panic(err)
	}
	if err := json.Unmarshal([]byte(input), v); err != nil {
		panic(err)
	}
	write(dir, name+".decoded.json", v)
}

func main() {
	dir := filepath.Join("..", "..", "resources", "extender-golden")
	names := []string{"gpu-a", "gpu-b", "cpu-1"}

	// what kube-scheduler sends
	write(dir, "filter-args-node-names.json", ExtenderArgs{Pod: gpuPod(), NodeNames: &names})
	write(dir, "filter-args-nodes.json", ExtenderArgs{Pod: gpuPod(), Nodes: &NodeList{Items: []Node{gfdNode("gpu-a", "8"), gfdNode("gpu-b", "8"), cpuNode("cpu-1")}}})
	write(dir, "bind-args.json", ExtenderBindingArgs{PodName: "train-0", PodNamespace: "vision", PodUID: "6f1c2f0e-0000-4000-8000-000000000001", Node: "gpu-a"})
	write(dir, "preempt-args-meta.json", ExtenderPreemptionArgs{Pod: gpuPod(), NodeNameToMetaVictims: map[string]*MetaVictims{
		"gpu-a": {Pods: []*MetaPod{{UID: "6f1c2f0e-0000-4000-8000-0000000000a1"}}, NumPDBViolations: 0},
		"gpu-b": {Pods: []*MetaPod{}, NumPDBViolations: 1},
	}})
	write(dir, "preempt-args-victims.json", ExtenderPreemptionArgs{Pod: gpuPod(), NodeNameToVictims: map[string]*Victims{
		"gpu-a": {Pods: []*Pod{victim("old-0", "6f1c2f0e-0000-4000-8000-0000000000a1")}, NumPDBViolations: 2},
	}})

	// what the extender answers
	passed := []string{"gpu-a"}
	write(dir, "filter-result-node-names.json", ExtenderFilterResult{
		NodeNames:                  &passed,
		FailedNodes:                FailedNodesMap{"gpu-b": "without a GPU that has the memory"},
		FailedAndUnresolvableNodes: FailedNodesMap{"cpu-1": "node has no GPUs gpupool knows of (no HAMi registration, no GPU feature discovery labels)"},
	})
	write(dir, "filter-result-nodes.json", ExtenderFilterResult{
		Nodes:                      &NodeList{Items: []Node{gfdNode("gpu-a", "8")}},
		FailedNodes:                FailedNodesMap{"gpu-b": "without a GPU that has the memory"},
		FailedAndUnresolvableNodes: FailedNodesMap{"cpu-1": "node has no GPUs gpupool knows of (no HAMi registration, no GPU feature discovery labels)"},
	})
	write(dir, "filter-result-error.json", ExtenderFilterResult{FailedNodes: FailedNodesMap{}, FailedAndUnresolvableNodes: FailedNodesMap{}, Error: "the request has no Pod"})
	write(dir, "prioritize-result.json", HostPriorityList{{Host: "gpu-a", Score: MaxExtenderPriority}, {Host: "gpu-b", Score: 4}, {Host: "cpu-1", Score: MinExtenderPriority}})
	write(dir, "bind-result-ok.json", ExtenderBindingResult{})
	write(dir, "bind-result-error.json", ExtenderBindingResult{Error: "tenant vision holds 8 of its limit of 8 GPUs; <quota> & more\u2028"})
	write(dir, "preempt-result.json", ExtenderPreemptionResult{NodeNameToMetaVictims: map[string]*MetaVictims{
		"gpu-b": {Pods: []*MetaPod{{UID: "u-2"}}, NumPDBViolations: 1},
		"gpu-a": {Pods: []*MetaPod{{UID: "u-1"}}, NumPDBViolations: 0},
	}})

	// keys in any case, unknown keys, as Go decodes them
	decodeAgain(dir, "filter-args-lowercase", `{"pod":{"metadata":{"name":"train-0","namespace":"vision","uid":"u-9"},"spec":{"containers":[{"name":"main","resources":{"limits":{"nvidia.com/gpu":"2"}}}]}},"NODENAMES":["gpu-a"],"nodes":null,"unknownField":1}`, &ExtenderArgs{})
	decodeAgain(dir, "bind-args-mixedcase", `{"podname":"train-0","PODNAMESPACE":"vision","podUid":"u-9","nOdE":"gpu-a"}`, &ExtenderBindingArgs{})
	decodeAgain(dir, "preempt-args-lowercase", `{"pod":{"metadata":{"name":"p","namespace":"n"}},"nodenametometavictims":{"gpu-a":{"pods":[{"uid":"u-1"}],"numpdbviolations":3}}}`, &ExtenderPreemptionArgs{})
	fmt.Println("wrote", dir)
}
