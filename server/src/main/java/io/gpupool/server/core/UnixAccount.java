package io.gpupool.server.core;

import java.util.regex.Pattern;

/**
 * The rules for the Unix account a job runs as (a token's {@code unixUser}, a job's {@code runAs}). The server
 * checks names only: the account itself is looked up on the node that runs the job, whose agent refuses uid 0
 * under any name unless the server allows root jobs.
 */
public final class UnixAccount {
    /** POSIX portable user names (as useradd's default NAME_REGEX, plus dots): no uid numbers, no paths. */
    private static final Pattern NAME = Pattern.compile("[a-z_][a-z0-9_.-]{0,31}");
    public static final String ROOT = "root";

    private UnixAccount() {}

    /** Throws a 400 naming the field unless {@code name} is a well-formed account name. */
    public static void checkName(String field, String name) {
        if (!NAME.matcher(name).matches()) {
            throw ServiceException.invalid(field, "must be a Unix account name ([a-z_][a-z0-9_.-]*, at most 32 characters), got '"
                    + (name.length() > 40 ? name.substring(0, 40) + "..." : name) + "'");
        }
    }

    /** Throws a 403 naming the field if the account is root and the server was not started to allow that. */
    public static void checkNotRoot(String field, String name, boolean allowRoot) {
        if (ROOT.equals(name) && !allowRoot) {
            throw ServiceException.forbidden("field '" + field + "': jobs never run as root unless the server is started with --allow-root-jobs");
        }
    }
}
