package io.gpupool.agent.run;

/** A job's two output streams and their files in the job directory. */
public enum LogStream {
    STDOUT("stdout.log"), STDERR("stderr.log");

    private final String fileName;

    LogStream(String fileName) {
        this.fileName = fileName;
    }

    public String fileName() {
        return fileName;
    }
}
