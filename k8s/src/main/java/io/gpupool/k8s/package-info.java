/** Kubernetes drivers of the engine: the kube-scheduler extender and the secondary scheduler. */
package io.gpupool.k8s;
