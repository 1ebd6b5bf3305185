package io.gpupool.agent.protocol;

import io.gpupool.model.SpecException;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;

/**
 * The certificate files of the protocol's TLS transport, read the same way on both ends: the server's own chain
 * ({@code --tls-cert}) and the CA file a client trusts ({@code --ca}) are PEM files of X.509 certificates.
 */
public final class PemCertificates {
    private PemCertificates() {
    }

    /**
     * The X.509 certificates of a PEM file, in file order.
     *
     * @param option the command-line option that named the file, for messages ({@code --ca}, {@code --tls-cert})
     * @throws SpecException naming the option and the file: missing, unreadable, not PEM certificates
     */
    public static List<X509Certificate> read(Path file, String option) {
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
}
