package dev.fencing.nodemanager.grpc;

import io.grpc.BindableService;
import io.grpc.Server;
import io.grpc.ServerCredentials;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
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
     * @param port        TCP port (0 = any free port)
     * @param credentials TLS server credentials, or null for plaintext ({@code --insecure-plaintext})
     * @param service     the AgentControl implementation
     * @param auth        authenticates every call before the service sees it
     */
    public AgentControlServer(int port, ServerCredentials credentials, BindableService service,
                              ServerInterceptor auth) {
        this.tls = credentials != null;
        NettyServerBuilder builder = credentials != null
                ? NettyServerBuilder.forAddress(new InetSocketAddress(port), credentials)
                : NettyServerBuilder.forPort(port);
        this.server = builder
                .addService(ServerInterceptors.intercept(service, auth))
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
        if (tls) {
            LOG.info("event=agent_control_listening port={} tls=true", server.getPort());
        } else {
            LOG.warn("event=agent_control_listening port={} tls=false reason=\"--insecure-plaintext: agent tokens, "
                    + "configs and gossip keys cross the network unencrypted; for local labs only\"",
                    server.getPort());
        }
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
