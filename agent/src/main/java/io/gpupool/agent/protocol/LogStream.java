package io.gpupool.agent.protocol;

/** A job's two output streams. */
public enum LogStream {
    STDOUT, STDERR
}
