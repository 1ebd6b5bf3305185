package io.gpupool.agent.tls;

import io.gpupool.model.SpecException;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.TrustManagerFactory;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.NoSuchAlgorithmException;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;

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
        List<X509Certificate> cas = readCertificates(caFile, OPTION);
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

    /**
     * The X.509 certificates of a PEM file, in file order.
     *
     * @param option the command-line option that named the file, for messages ({@code --ca}, {@code --tls-cert})
     * @throws SpecException naming the option and the file: missing, unreadable, not PEM certificates
     */
    public static List<X509Certificate> readCertificates(Path file, String option) {
        String where = option + " " + file;
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            throw new SpecException(where, null, "no such file");
        } catch (IOException e) {
            throw new SpecException(where, null, "cannot be read: " + e.getMessage());
        }
        String text = new String(bytes, StandardCharsets.ISO_8859_1);
        if (!text.contains("-----BEGIN CERTIFICATE-----")) {
            String held = text.contains("PRIVATE KEY-----") ? "it holds a private key, not a certificate"
                    : text.contains("-----BEGIN ") ? "it holds no certificate" : "it is not a PEM file";
            throw new SpecException(where, null, "must hold PEM certificates ('-----BEGIN CERTIFICATE-----'), but " + held);
        }
        List<X509Certificate> out = new ArrayList<>();
        try {
            // only the certificate blocks: a file may also hold a key or comments, which the parser would trip over
            int from = 0;
            while ((from = text.indexOf("-----BEGIN CERTIFICATE-----", from)) >= 0) {
                int end = text.indexOf("-----END CERTIFICATE-----", from);
                if (end < 0) throw new SpecException(where, null, "a certificate block has no '-----END CERTIFICATE-----' line");
                end += "-----END CERTIFICATE-----".length();
                CertificateFactory x509 = CertificateFactory.getInstance("X.509");
                for (Certificate c : x509.generateCertificates(new ByteArrayInputStream(text.substring(from, end).getBytes(StandardCharsets.ISO_8859_1)))) {
                    out.add((X509Certificate) c);
                }
                from = end;
            }
        } catch (CertificateException e) {
            throw new SpecException(where, null, "certificate " + (out.size() + 1) + " is not a valid X.509 certificate: " + e.getMessage());
        }
        return out;
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
