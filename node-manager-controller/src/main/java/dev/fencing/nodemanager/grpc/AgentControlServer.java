package dev.fencing.nodemanager.grpc;

import io.grpc.BindableService;
import io.grpc.Server;
import io.grpc.ServerCredentials;
import io.grpc.TlsServerCredentials;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.io.File;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The TCP listener of AgentControl (grpc-java on Netty). Keepalive pings find dead agents whose TCP connection
 * vanished without a FIN; agents may ping every 10 s without being cut off.
 */
public final class AgentControlServer implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(AgentControlServer.class);

    private final Server server;
    private final boolean tls;

    /**
     * @param port    TCP port (0 = any free port)
     * @param certChain PEM certificate chain for TLS, or null for plaintext
     * @param privateKey PEM private key for TLS, or null
     * @param service the AgentControl implementation
     */
    public AgentControlServer(int port, File certChain, File privateKey, BindableService service) throws IOException {
        this.tls = certChain != null;
        NettyServerBuilder builder;
        if (certChain != null) {
            ServerCredentials tls = TlsServerCredentials.create(certChain, privateKey);
            builder = NettyServerBuilder.forAddress(new InetSocketAddress(port), tls);
        } else {
            builder = NettyServerBuilder.forPort(port);
        }
        this.server = builder
                .addService(service)
                .keepAliveTime(30, TimeUnit.SECONDS)
                .keepAliveTimeout(10, TimeUnit.SECONDS)
                .permitKeepAliveTime(10, TimeUnit.SECONDS)
                .permitKeepAliveWithoutCalls(true)
                .maxInboundMessageSize(4 * 1024 * 1024)
                .build();
    }

    /** Starts listening. */
    public AgentControlServer start() throws IOException {
        server.start();
        LOG.info("event=agent_control_listening port={} tls={}", server.getPort(), tls);
        return this;
    }

    /** The bound port. */
    public int port() {
        return server.getPort();
    }

    @Override
    public void close() {
        server.shutdown();
        try {
            if (!server.awaitTermination(2, TimeUnit.SECONDS)) {
                server.shutdownNow();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            server.shutdownNow();
        }
    }
}
