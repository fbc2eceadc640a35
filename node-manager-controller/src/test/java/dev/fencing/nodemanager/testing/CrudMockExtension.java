package dev.fencing.nodemanager.testing;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.NamespacedKubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.HashMap;
import java.util.Map;
import java.util.Queue;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/** Starts the mock and its client for {@link CrudMockClient} before each test, closes them after it. */
public final class CrudMockExtension implements BeforeEachCallback, AfterEachCallback {

    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(CrudMockExtension.class);

    private record Started(KubernetesMockServer server, NamespacedKubernetesClient client) {
    }

    /** A started CRUD mock server (answering every request) and its client; the caller closes both. */
    public static KubernetesMockServer startServer() {
        Map<ServerRequest, Queue<ServerResponse>> responses = new HashMap<>();
        KubernetesMockServer server = new KubernetesMockServer(new Context(Serialization.jsonMapper()),
                new MockWebServer(), responses, new AnsweringCrudDispatcher(responses), false);
        server.init();
        return server;
    }

    @Override
    public void beforeEach(ExtensionContext context) throws Exception {
        KubernetesMockServer server = startServer();
        NamespacedKubernetesClient client = server.createClient();
        context.getStore(NS).put(Started.class, new Started(server, client));
        for (Object instance : context.getRequiredTestInstances().getAllInstances()) {
            for (Class<?> c = instance.getClass(); c != Object.class; c = c.getSuperclass()) {
                for (Field f : c.getDeclaredFields()) {
                    if (Modifier.isStatic(f.getModifiers())) {
                        continue;
                    }
                    if (f.getType() == KubernetesMockServer.class) {
                        f.setAccessible(true);
                        f.set(instance, server);
                    } else if (f.getType().isAssignableFrom(NamespacedKubernetesClient.class)
                            && KubernetesClient.class.isAssignableFrom(f.getType())) {
                        f.setAccessible(true);
                        f.set(instance, client);
                    }
                }
            }
        }
    }

    @Override
    public void afterEach(ExtensionContext context) {
        Started started = context.getStore(NS).remove(Started.class, Started.class);
        if (started != null) {
            started.client().close();
            started.server().destroy();
        }
    }
}
