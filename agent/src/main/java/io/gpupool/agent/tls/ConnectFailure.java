package io.gpupool.agent.tls;

import java.net.URI;
import java.security.cert.CertPathBuilderException;
import java.security.cert.CertPathValidatorException;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;

/**
 * Turns a connection failure that retrying will not cure (the server's certificate is not trusted or not for
 * this host, TLS spoken to a plain HTTP port) into one line a user can act on, e.g. "cannot connect to
 * https://10.0.0.5:8080: the server's TLS certificate is not trusted (signed by an unknown CA; give the CA with
 * --ca FILE)". The agent and the command line say the same.
 */
public final class ConnectFailure {
    private ConnectFailure() {
    }

    /**
     * The line for {@code failure} when it is a TLS setting to fix, else null (a refused connection, a time-out:
     * the caller says what it says for those).
     */
    public static String describe(URI server, ServerTrust trust, Throwable failure) {
        String reason = reason(server, trust, failure);
        return reason == null ? null : "cannot connect to " + base(server) + ": " + reason;
    }

    private static String reason(URI server, ServerTrust trust, Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            String m = t.getMessage() == null ? "" : t.getMessage();
            if (t instanceof CertificateExpiredException) return "the server's TLS certificate has expired (" + m + "); the server needs a new one";
            if (t instanceof CertificateNotYetValidException) return "the server's TLS certificate is not valid yet (" + m + "); check both machines' clocks";
            if (m.contains("No subject alternative") || m.contains("No name matching")) {
                return "the server's TLS certificate is not for " + server.getHost()
                        + " (its subjectAltName must name the host of the URL; connect with a name it holds, or give the server a certificate for this one)";
            }
            if (t instanceof CertPathBuilderException || t instanceof CertPathValidatorException || m.contains("PKIX path")) {
                return trust.caFile() == null
                        ? "the server's TLS certificate is not trusted (signed by an unknown CA; give the CA with " + ServerTrust.OPTION + " FILE)"
                        : "the server's TLS certificate is not trusted (not signed by the CA in " + trust.caFile()
                          + "; give the CA that signed it with " + ServerTrust.OPTION + " FILE)";
            }
            if (m.contains("nrecognized SSL message")) { // "Unsupported or unrecognized SSL message", "Unrecognized SSL message, plaintext connection?"
                return "the server does not speak TLS there (a plain HTTP server: use http://, or start the server with --tls-cert and --tls-key)";
            }
        }
        return null; // other handshake failures (a connection cut halfway) may be passing: the caller retries them
    }

    private static String base(URI server) {
        return server.getScheme() + "://" + server.getRawAuthority();
    }
}
