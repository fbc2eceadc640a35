package dev.fencing.helm;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.http.AsyncBody;
import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.fabric8.kubernetes.client.http.Interceptor;
import java.nio.ByteBuffer;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Every answer the API server gave one client, as {@code CODE METHOD path}: the controller's client is built with this
 * interceptor, so a 403 is seen even where the controller only logs it, retries it or swallows it. Watches that fail
 * their upgrade are seen too ({@code afterFailure}).
 */
final class ApiResponses implements Interceptor {

    private final List<String> answers = new CopyOnWriteArrayList<>();
    private final Set<HttpResponse<?>> seen = Collections.synchronizedSet(Collections.newSetFromMap(
            new IdentityHashMap<>()));

    /** A new client with {@code config}'s server and credentials whose answers are recorded here. */
    KubernetesClient client(Config config) {
        return new KubernetesClientBuilder().withConfig(config)
                .withHttpClientBuilderConsumer(b -> b.addOrReplaceInterceptor("api-responses", this)).build();
    }

    @Override
    public void after(HttpRequest request, HttpResponse<?> response, AsyncBody.Consumer<List<ByteBuffer>> consumer) {
        record(request, response);
    }

    @Override
    public CompletableFuture<Boolean> afterFailure(BasicBuilder builder, HttpResponse<?> response, RequestTags tags) {
        record(response.request(), response);
        return CompletableFuture.completedFuture(false);
    }

    private void record(HttpRequest request, HttpResponse<?> response) {
        if (seen.add(response)) {
            String query = request.uri().getRawQuery();
            boolean watch = query != null && query.matches("(.*&)?watch=(true|1)(&.*)?");
            answers.add(response.code() + " " + (watch ? "WATCH" : request.method()) + " " + request.uri().getRawPath());
        }
    }

    /** Every answer so far. */
    List<String> all() {
        return List.copyOf(answers);
    }

    /** The requests the server refused with 403 Forbidden (RBAC). */
    List<String> forbidden() {
        return answers.stream().filter(a -> a.startsWith("403 ")).toList();
    }

    /** Every answer that was no success (neither 2xx nor a watch's 101). */
    List<String> failed() {
        return answers.stream().filter(a -> !a.startsWith("2") && !a.startsWith("101 ")).toList();
    }

    /** True when some answer with {@code code} was to a request starting with {@code methodAndPath}. */
    boolean answered(int code, String methodAndPath) {
        return answers.stream().anyMatch(a -> a.startsWith(code + " " + methodAndPath));
    }
}
