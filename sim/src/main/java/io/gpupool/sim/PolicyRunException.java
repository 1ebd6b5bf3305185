package io.gpupool.sim;

/** A replay under one policy failed; the message names the policy, the cause is what went wrong. */
public final class PolicyRunException extends RuntimeException {
    private final String policy;

    public PolicyRunException(String policy, Throwable cause) {
        super("replay under policy '" + policy + "' failed: " + cause, cause);
        this.policy = policy;
    }

    public String policy() { return policy; }
}
