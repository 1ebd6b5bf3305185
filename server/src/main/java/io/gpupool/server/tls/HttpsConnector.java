package io.gpupool.server.tls;

import io.gpupool.server.api.ApiServer;

import org.eclipse.jetty.http.BadMessageException;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.DetectorConnectionFactory;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.SecureRequestCustomizer;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.SslConnectionFactory;
import org.eclipse.jetty.util.ssl.SslContextFactory;

import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.util.Base64;

/**
 * A Jetty connector that serves HTTPS with the server's {@link TlsFiles.Identity}. A client that speaks plain
 * HTTP to it (an http:// URL left over from before) gets a 400 saying to use https:// rather than a connection
 * closed without a word; its request is never handled.
 */
public final class HttpsConnector {
    static final String PLAIN_HTTP_REFUSED = "this server speaks HTTPS only: use an https:// URL";

    private HttpsConnector() {
    }

    /** The connector, not yet given its host and port. */
    public static ServerConnector create(Server server, HttpConfiguration http, TlsFiles.Identity identity) {
        // the key store lives only in this process's memory; its password guards nothing, so any will do
        char[] password = Base64.getEncoder().encodeToString(new SecureRandom().generateSeed(12)).toCharArray();
        SslContextFactory.Server tls = new SslContextFactory.Server();
        tls.setKeyStore(identity.keyStore(password));
        tls.setKeyStorePassword(new String(password));
        tls.setCertAlias("server");

        HttpConfiguration https = new HttpConfiguration(http);
        https.addCustomizer(new SecureRequestCustomizer());
        HttpConnectionFactory httpsRequests = new HttpConnectionFactory(https);
        SslConnectionFactory handshake = new SslConnectionFactory(tls, httpsRequests.getProtocol());

        HttpConfiguration plain = new HttpConfiguration(http);
        plain.addCustomizer((request, responseHeaders) -> {
            responseHeaders.put(HttpHeader.CONNECTION, "close");
            throw new BadMessageException(400, PLAIN_HTTP_REFUSED);
        });
        HttpConnectionFactory plainRefusal = new HttpConnectionFactory(plain);

        DetectorConnectionFactory detector = new DetectorConnectionFactory(handshake) {
            @Override
            protected void nextProtocol(Connector connector, EndPoint endPoint, ByteBuffer buffer) {
                upgradeToConnectionFactory(plainRefusal, connector, endPoint);
            }
        };
        return new ServerConnector(server, ApiServer.ACCEPTORS, -1, detector, handshake, httpsRequests);
    }
}
