package io.gpupool.server.core;

/**
 * A request the service cannot carry out, with where (field) and why (rule). The REST layer turns the kind
 * into a status code; nothing has changed when this is thrown.
 */
public final class ServiceException extends RuntimeException {
    public enum Kind {
        MALFORMED(400), UNAUTHENTICATED(401), FORBIDDEN(403), NOT_FOUND(404), CONFLICT(409), TOO_LARGE(413),
        UNSUPPORTED_MEDIA_TYPE(415), INVALID(422), RATE_LIMITED(429), UNAVAILABLE(503);

        public final int status;

        Kind(int status) { this.status = status; }
    }

    private final Kind kind;
    private final String field;
    private final String rule;

    public ServiceException(Kind kind, String field, String rule) {
        super((field != null ? "field '" + field + "': " : "") + rule);
        this.kind = kind;
        this.field = field;
        this.rule = rule;
    }

    public static ServiceException invalid(String field, String rule) { return new ServiceException(Kind.INVALID, field, rule); }
    public static ServiceException malformed(String field, String rule) { return new ServiceException(Kind.MALFORMED, field, rule); }
    public static ServiceException notFound(String what) { return new ServiceException(Kind.NOT_FOUND, null, what + " not found"); }
    public static ServiceException conflict(String field, String rule) { return new ServiceException(Kind.CONFLICT, field, rule); }
    public static ServiceException forbidden(String rule) { return new ServiceException(Kind.FORBIDDEN, null, rule); }

    public Kind kind() { return kind; }
    public String field() { return field; }
    public String rule() { return rule; }
}
