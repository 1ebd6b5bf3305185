package io.gpupool.server.tls;

import io.gpupool.agent.protocol.PemCertificates;
import io.gpupool.model.SpecException;
import org.bouncycastle.asn1.ASN1ObjectIdentifier;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.cert.X509CertificateHolder;
import org.bouncycastle.openssl.PEMEncryptedKeyPair;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;
import org.bouncycastle.pkcs.PKCS8EncryptedPrivateKeyInfo;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.CertificateExpiredException;
import java.security.cert.CertificateNotYetValidException;
import java.security.cert.X509Certificate;
import java.util.List;

/**
 * Reads the server's TLS identity from the PEM files openssl writes: the certificate file ({@code --tls-cert}: the
 * server's certificate first, then any intermediate CAs) and the private key ({@code --tls-key}: PKCS#8
 * "PRIVATE KEY", or the traditional "RSA PRIVATE KEY" / "EC PRIVATE KEY", unencrypted). Everything that would
 * only fail later, at a client's handshake, fails here, naming the file and what is wrong: a key that is not the
 * certificate's, an expired certificate, an encrypted key.
 */
public final class TlsFiles {
    static final String CERT_OPTION = "--tls-cert";
    static final String KEY_OPTION = "--tls-key";

    /** A private key and the certificate chain it belongs to, the first certificate being the server's own. */
    public record Identity(PrivateKey key, List<X509Certificate> chain) {
        /** The server's own certificate. */
        public X509Certificate certificate() {
            return chain.getFirst();
        }

        /** An in-memory key store with this identity under the alias "server", protected by {@code password}. */
        public KeyStore keyStore(char[] password) {
            try {
                KeyStore ks = KeyStore.getInstance("PKCS12");
                ks.load(null, null);
                ks.setKeyEntry("server", key, password, chain.toArray(new X509Certificate[0]));
                return ks;
            } catch (GeneralSecurityException | IOException e) {
                throw new IllegalStateException("cannot hold the TLS key in a key store: " + e, e);
            }
        }
    }

    private TlsFiles() {
    }

    /**
     * @throws SpecException naming the option and the file, and the rule it breaks
     */
    public static Identity load(Path certFile, Path keyFile) {
        List<X509Certificate> chain = PemCertificates.read(certFile, CERT_OPTION);
        X509Certificate own = chain.getFirst();
        try {
            own.checkValidity();
        } catch (CertificateExpiredException e) {
            throw new SpecException(CERT_OPTION + " " + certFile, null, "the certificate expired on " + own.getNotAfter().toInstant()
                    + "; clients refuse it: make a new one (docs/install.md, \"TLS\")");
        } catch (CertificateNotYetValidException e) {
            throw new SpecException(CERT_OPTION + " " + certFile, null, "the certificate is not valid before " + own.getNotBefore().toInstant()
                    + " (is this machine's clock right?)");
        }
        PrivateKey key = readKey(keyFile);
        if (!belongTogether(key, own)) {
            throw new SpecException(KEY_OPTION + " " + keyFile, null, "this private key does not belong to the first certificate in " + certFile
                    + " (the server's own certificate must come first, then its chain)");
        }
        return new Identity(key, chain);
    }

    static PrivateKey readKey(Path file) {
        String where = KEY_OPTION + " " + file;
        try (Reader r = Files.newBufferedReader(file, StandardCharsets.ISO_8859_1); PEMParser pem = new PEMParser(r)) {
            boolean sawCertificate = false;
            for (Object o = pem.readObject(); o != null; o = pem.readObject()) {
                JcaPEMKeyConverter keys = new JcaPEMKeyConverter();
                switch (o) {
                    case PrivateKeyInfo pkcs8 -> { return keys.getPrivateKey(pkcs8); }
                    case PEMKeyPair traditional -> { return keys.getPrivateKey(traditional.getPrivateKeyInfo()); }
                    case PKCS8EncryptedPrivateKeyInfo e -> throw encrypted(where);
                    case PEMEncryptedKeyPair e -> throw encrypted(where);
                    case X509CertificateHolder c -> sawCertificate = true;
                    case ASN1ObjectIdentifier curve -> { } // the "EC PARAMETERS" block `openssl ecparam -genkey` writes before the key
                    default -> { }
                }
            }
            throw new SpecException(where, null, sawCertificate ? "holds a certificate but no private key"
                    : "holds no PEM private key ('-----BEGIN PRIVATE KEY-----', or RSA/EC PRIVATE KEY)");
        } catch (NoSuchFileException e) {
            throw new SpecException(where, null, "no such file");
        } catch (IOException | RuntimeException e) {
            if (e instanceof SpecException s) throw s;
            // PEMParser's messages for a damaged block: base64 or ASN.1 that does not parse
            throw new SpecException(where, null, "is not a valid PEM private key: " + e.getMessage());
        }
    }

    private static SpecException encrypted(String where) {
        return new SpecException(where, null, "the private key is encrypted; give it unencrypted (openssl pkey -in KEY -out PLAIN.key), "
                + "and let only the server's user read it (chmod 600)");
    }

    /** Whether the certificate's public key verifies what the private key signs. */
    private static boolean belongTogether(PrivateKey key, X509Certificate cert) {
        String algorithm = switch (key.getAlgorithm()) {
            case "RSA" -> "SHA256withRSA";
            case "EC" -> "SHA256withECDSA";
            case "Ed25519", "EdDSA" -> "Ed25519";
            case "Ed448" -> "Ed448";
            default -> null;
        };
        if (algorithm == null) return true; // a key type without a signature check here: the handshake will tell
        try {
            byte[] probe = "gpupool tls key check".getBytes(StandardCharsets.US_ASCII);
            Signature sign = Signature.getInstance(algorithm);
            sign.initSign(key);
            sign.update(probe);
            byte[] signature = sign.sign();
            Signature verify = Signature.getInstance(algorithm);
            verify.initVerify(cert.getPublicKey());
            verify.update(probe);
            return verify.verify(signature);
        } catch (GeneralSecurityException e) {
            return false; // e.g. an EC key against an RSA certificate
        }
    }
}
