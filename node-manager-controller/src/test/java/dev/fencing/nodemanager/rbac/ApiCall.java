package dev.fencing.nodemanager.rbac;

import io.fabric8.mockwebserver.http.RecordedRequest;
import java.util.Optional;

/**
 * One Kubernetes API request in RBAC terms.
 *
 * @param verb        get, list, watch, create, update, patch, delete
 * @param apiGroup    "" for the core group
 * @param resource    plural resource name
 * @param subresource e.g. "status", or empty
 * @param namespace   the namespace, or null for a cluster-scoped request
 * @param name        the object's name, or null for a list, watch or create
 */
public record ApiCall(String verb, String apiGroup, String resource, String subresource, String namespace,
                      String name) {

    /** The RBAC form of a request recorded by the mock server; empty for non-resource paths (discovery, /version). */
    static Optional<ApiCall> of(RecordedRequest request) {
        String full = request.getPath();
        int q = full.indexOf('?');
        String path = q < 0 ? full : full.substring(0, q);
        boolean watch = q >= 0 && full.substring(q).matches(".*[?&]watch=(true|1).*");
        String[] parts = path.replaceFirst("^/", "").split("/");
        int at;
        String group;
        if (parts.length >= 3 && parts[0].equals("api")) {
            group = "";
            at = 2;
        } else if (parts.length >= 4 && parts[0].equals("apis")) {
            group = parts[1];
            at = 3;
        } else {
            return Optional.empty();
        }
        String namespace = null;
        if (parts.length > at + 1 && parts[at].equals("namespaces") && parts.length > at + 2) {
            namespace = parts[at + 1];
            at += 2;
        }
        String resource = parts[at];
        String name = parts.length > at + 1 ? parts[at + 1] : null;
        String sub = parts.length > at + 2 ? parts[at + 2] : "";
        String verb = switch (request.getMethod()) {
            case "GET" -> watch ? "watch" : name == null ? "list" : "get";
            case "POST" -> "create";
            case "PUT" -> "update";
            case "PATCH" -> "patch";
            case "DELETE" -> name == null ? "deletecollection" : "delete";
            default -> request.getMethod().toLowerCase();
        };
        return Optional.of(new ApiCall(verb, group, resource, sub, namespace, name));
    }

    /** {@code resource/subresource}, as RBAC rules name it. */
    String rbacResource() {
        return subresource.isEmpty() ? resource : resource + "/" + subresource;
    }

    @Override
    public String toString() {
        return verb + " " + (apiGroup.isEmpty() ? "core" : apiGroup) + "/" + rbacResource()
                + (namespace == null ? " (cluster)" : " in " + namespace);
    }
}
