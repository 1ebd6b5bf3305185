package io.gpupool.agent.tls;

import io.gpupool.agent.protocol.PemCertificates;
import io.gpupool.model.SpecException;

import java.io.IOException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.NoSuchAlgorithmException;
import java.security.cert.X509Certificate;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.TrustManagerFactory;

/**
 * Which TLS certificates a client of the server (an agent, the command line) accepts: those the JDK's system
 * trust store vouches for, or, with {@code --ca FILE}, only those signed by the CA certificates in that PEM file
 * (a private CA). Host name verification is not this class's business and stays on: the JDK's HTTP client does it,
 * and {@link #verifyingHost} turns it on for raw sockets.
 */
public final class ServerTrust {
    /** The option that names a CA file, in messages. */
    public static final String OPTION = "--ca";

    private final Path caFile;
    private final SSLContext context;

    private ServerTrust(Path caFile, SSLContext context) {
        this.caFile = caFile;
        this.context = context;
    }

    /** The JDK's default trust store (public CAs, or what the system's administrator added to it). */
    public static ServerTrust system() {
        try {
            return new ServerTrust(null, SSLContext.getDefault());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("this JDK has no default TLS context", e);
        }
    }

    /** {@link #system()} when {@code caFile} is null, else {@link #fromCaFile}. */
    public static ServerTrust of(Path caFile) {
        return caFile == null ? system() : fromCaFile(caFile);
    }

    /**
     * Trusts the CA certificates of a PEM file (one or more {@code -----BEGIN CERTIFICATE-----} blocks) and nothing
     * else: a pool on a private CA should not also accept any public CA's certificate for its host.
     *
     * @throws SpecException naming the file when it is missing, unreadable or holds no certificate
     */
    public static ServerTrust fromCaFile(Path caFile) {
        List<X509Certificate> cas = PemCertificates.read(caFile, OPTION);
        try {
            KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
            store.load(null, null);
            for (int i = 0; i < cas.size(); i++) store.setCertificateEntry("ca-" + i, cas.get(i));
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(store);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, tmf.getTrustManagers(), null);
            return new ServerTrust(caFile, context);
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalStateException("cannot set up TLS with the CA certificates of " + caFile + ": " + e, e);
        }
    }

    /** The TLS context to open connections with. */
    public SSLContext sslContext() {
        return context;
    }

    /** The CA file given, or null for the system trust store. */
    public Path caFile() {
        return caFile;
    }

    /** Turns on host name verification on a raw TLS socket (the JDK's HTTP client does it by itself). */
    public static SSLParameters verifyingHost(SSLParameters p) {
        p.setEndpointIdentificationAlgorithm("HTTPS");
        return p;
    }

    @Override
    public String toString() {
        return caFile == null ? "the system trust store" : "the CA certificates in " + caFile;
    }
}
