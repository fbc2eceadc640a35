package dev.fencing.nodemanager.testing;

import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.net.HttpURLConnection;
import java.util.Map;
import java.util.Queue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The CRUD mock's dispatcher, answering the requests its handlers throw on as an API server would, instead of
 * leaving them unanswered until the client's request timeout (10 s, then retried: a caller blocked for 30 s and
 * more). A JSON patch that does not apply to the stored object (a {@code remove} of an array index that is no longer
 * there, which JOSDK's status diff sends when its cache is behind the server) gets 422 Unprocessable Entity, as from
 * kube-apiserver; any other failure of the mock itself gets 500. The caller then fails at once and retries with
 * fresher state, as it does against a real API server.
 */
public final class AnsweringCrudDispatcher extends KubernetesMixedDispatcher {

    private static final Logger LOG = LoggerFactory.getLogger(AnsweringCrudDispatcher.class);

    public AnsweringCrudDispatcher(Map<ServerRequest, Queue<ServerResponse>> responses) {
        super(responses);
    }

    @Override
    public MockResponse dispatch(RecordedRequest request) {
        try {
            return super.dispatch(request);
        } catch (RuntimeException e) {
            boolean patch = "PATCH".equals(request.getMethod()) && e.getClass().getName().startsWith(
                    "io.fabric8.zjsonpatch.");
            int code = patch ? 422 : HttpURLConnection.HTTP_INTERNAL_ERROR;
            LOG.warn("event=crud_mock_refused method={} path={} code={} error=\"{}\"", request.getMethod(),
                    request.getPath(), code, e.toString());
            Status status = new StatusBuilder().withStatus("Failure").withCode(code)
                    .withReason(patch ? "Invalid" : "InternalError").withMessage(e.toString()).build();
            return new MockResponse().setResponseCode(code).setBody(Serialization.asJson(status));
        }
    }
}
