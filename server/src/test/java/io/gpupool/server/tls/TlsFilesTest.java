package io.gpupool.server.tls;

import io.gpupool.model.SpecException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The PEM forms openssl writes, read as the server reads --tls-cert and --tls-key; and what is refused, with what message. */
class TlsFilesTest {
    @TempDir static Path dir;

    /** A CA, an EC and an RSA server certificate signed by it, and the keys in their other forms. */
    @BeforeAll
    static void makeFiles() throws Exception {
        sh("""
                openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -noenc -days 30 -subj "/CN=test CA" -keyout ca.key -out ca.crt
                openssl ecparam -name prime256v1 -genkey -out ec-traditional.key
                openssl req -new -key ec-traditional.key -subj "/CN=ec" -out ec.csr
                openssl x509 -req -in ec.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 30 -extfile <(echo "subjectAltName=IP:127.0.0.1") -out ec.crt
                openssl req -newkey rsa:2048 -noenc -subj "/CN=rsa" -keyout rsa.key -out rsa.csr
                openssl x509 -req -in rsa.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 30 -extfile <(echo "subjectAltName=IP:127.0.0.1") -out rsa.crt
                openssl rsa -in rsa.key -traditional -out rsa-traditional.key
                openssl pkey -in rsa.key -aes256 -passout pass:secret -out rsa-encrypted.key
                cat rsa.crt ca.crt > rsa-chain.crt
                cat ca.crt rsa.crt > rsa-chain-wrong-order.crt
                """);
    }

    @Test
    void reads_pkcs8_traditional_and_ec_keys_and_a_certificate_chain() throws Exception {
        assertThat(Files.readString(dir.resolve("rsa.key"))).startsWith("-----BEGIN PRIVATE KEY-----");
        assertThat(Files.readString(dir.resolve("rsa-traditional.key"))).startsWith("-----BEGIN RSA PRIVATE KEY-----");
        assertThat(Files.readString(dir.resolve("ec-traditional.key"))).startsWith("-----BEGIN EC PARAMETERS-----").contains("BEGIN EC PRIVATE KEY");

        assertThat(TlsFiles.load(dir.resolve("rsa.crt"), dir.resolve("rsa.key")).key().getAlgorithm()).isEqualTo("RSA");
        assertThat(TlsFiles.load(dir.resolve("rsa.crt"), dir.resolve("rsa-traditional.key")).key().getAlgorithm()).isEqualTo("RSA");
        assertThat(TlsFiles.load(dir.resolve("ec.crt"), dir.resolve("ec-traditional.key")).key().getAlgorithm()).isEqualTo("EC");
        TlsFiles.Identity chained = TlsFiles.load(dir.resolve("rsa-chain.crt"), dir.resolve("rsa.key"));
        assertThat(chained.chain()).hasSize(2);
        assertThat(chained.certificate().getSubjectX500Principal().getName()).isEqualTo("CN=rsa");
        assertThat(chained.keyStore("pw".toCharArray()).getCertificateChain("server")).hasSize(2);
    }

    @Test
    void bad_files_are_refused_naming_the_option_the_file_and_the_rule() throws IOException {
        Path garbage = Files.writeString(dir.resolve("garbage.key"), "this is not a key\n");
        Path damaged = Files.writeString(dir.resolve("damaged.key"), "-----BEGIN PRIVATE KEY-----\nAAAAnotbase64!!\n-----END PRIVATE KEY-----\n");
        Path rsaCrt = dir.resolve("rsa.crt");

        refused(rsaCrt, garbage, "--tls-key " + garbage + ": holds no PEM private key");
        refused(rsaCrt, damaged, "--tls-key " + damaged + ": is not a valid PEM private key");
        refused(rsaCrt, dir.resolve("rsa-encrypted.key"), "the private key is encrypted; give it unencrypted");
        refused(rsaCrt, rsaCrt, "holds a certificate but no private key");
        refused(rsaCrt, dir.resolve("missing.key"), "--tls-key " + dir.resolve("missing.key") + ": no such file");
        refused(rsaCrt, dir.resolve("ec-traditional.key"), "this private key does not belong to the first certificate in " + rsaCrt);
        refused(dir.resolve("rsa-chain-wrong-order.crt"), dir.resolve("rsa.key"), "the server's own certificate must come first");
        refused(dir.resolve("rsa.key"), dir.resolve("rsa.key"), "--tls-cert " + dir.resolve("rsa.key")
                + ": must hold PEM certificates ('-----BEGIN CERTIFICATE-----'), but it holds a private key, not a certificate");
        refused(garbage, dir.resolve("rsa.key"), "but it is not a PEM file");
        Path broken = Files.writeString(dir.resolve("broken.crt"), "-----BEGIN CERTIFICATE-----\nMIIBIjANBg\n-----END CERTIFICATE-----\n");
        refused(broken, dir.resolve("rsa.key"), "--tls-cert " + broken + ": certificate 1 is not a valid X.509 certificate");
    }

    private static void refused(Path cert, Path key, String message) {
        assertThatThrownBy(() -> TlsFiles.load(cert, key)).isInstanceOf(SpecException.class).hasMessageContaining(message);
    }

    static void sh(String script) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("bash", "-euo", "pipefail", "-c", script).directory(dir.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
    }
}
