package io.gpupool.agent.confine;

/**
 * One device a job may use: what the v1 devices controller takes as a {@code devices.allow} line and the v2 filter
 * program compiles into one comparison block.
 *
 * @param type   'c' (character) or 'b' (block)
 * @param major  the major number, {@link #ANY} for all
 * @param minor  the minor number, {@link #ANY} for all
 * @param access any of 'r', 'w', 'm' (mknod)
 * @param name   what it is, for messages ("nvidia0", "null")
 */
public record DeviceRule(char type, int major, int minor, String access, String name) {

    public static final int ANY = -1;

    public DeviceRule {
        if (type != 'c' && type != 'b') throw new IllegalArgumentException("device type must be 'c' or 'b', got " + type);
        if (major < ANY || minor < ANY) throw new IllegalArgumentException("major and minor must be >= 0 (or ANY)");
        if (access == null || access.isEmpty() || !access.matches("[rwm]+")) throw new IllegalArgumentException("access must be of r, w, m, got " + access);
    }

    public static DeviceRule chr(int major, int minor, String name) {
        return new DeviceRule('c', major, minor, "rwm", name);
    }

    /** The v1 form: {@code c 195:0 rwm}. */
    public String v1Line() {
        return type + " " + (major == ANY ? "*" : Integer.toString(major)) + ":" + (minor == ANY ? "*" : Integer.toString(minor)) + " " + access;
    }

    @Override
    public String toString() {
        return name + " (" + v1Line() + ")";
    }
}
