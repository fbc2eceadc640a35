package dev.fencing.nodemanager.keyring;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * What a group's keyring Secret holds, as the rotation sees it: the key data and the rotation bookkeeping kept in the
 * Secret's annotations, so a restarted or newly elected controller continues where the previous one stopped.
 *
 * @param data             the Secret's data (base64 keys: {@code primary}, {@code secondary-*})
 * @param revision         the keyring revision agents install and report (GossipKeyring.revision)
 * @param phase            the running rotation's phase, or null when no rotation runs
 * @param request          the rotation request (annotation value) being worked on, or "" when none
 * @param completedRequest the last request whose rotation completed, or ""
 */
public record KeyringState(Map<String, String> data, long revision, KeyRotationPhase phase, String request,
                           String completedRequest) {

    /** Secret annotation: the keyring revision. */
    public static final String REVISION_ANNOTATION = "node-manager.deckhouse.io/gossip-keyring-revision";
    /** Secret annotation: the running rotation's phase. */
    public static final String PHASE_ANNOTATION = "node-manager.deckhouse.io/gossip-key-rotation-phase";
    /** Secret annotation: the request the running rotation serves. */
    public static final String REQUEST_ANNOTATION = "node-manager.deckhouse.io/gossip-key-rotation-request";
    /** Secret annotation: the last request whose rotation completed. */
    public static final String COMPLETED_ANNOTATION = "node-manager.deckhouse.io/gossip-key-rotation-completed";

    /** Copies the data; null strings become "". */
    public KeyringState {
        data = Map.copyOf(new TreeMap<>(Objects.requireNonNull(data, "data")));
        request = Objects.requireNonNullElse(request, "");
        completedRequest = Objects.requireNonNullElse(completedRequest, "");
    }

    /** Reads the state from a Secret's data and annotations (missing or malformed revision: 0). */
    public static KeyringState of(Map<String, String> data, Map<String, String> annotations) {
        Map<String, String> a = annotations == null ? Map.of() : annotations;
        return new KeyringState(data == null ? Map.of() : data, revisionOf(a),
                KeyRotationPhase.fromStored(a.get(PHASE_ANNOTATION)).orElse(null), a.get(REQUEST_ANNOTATION),
                a.get(COMPLETED_ANNOTATION));
    }

    /** The keyring revision recorded in a keyring Secret's annotations; 0 when absent or not a number. */
    public static long revisionOf(Map<String, String> annotations) {
        String value = annotations == null ? null : annotations.get(REVISION_ANNOTATION);
        if (value == null) {
            return 0;
        }
        try {
            return Math.max(0, Long.parseLong(value.trim()));
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /** The running phase, if any. */
    public Optional<KeyRotationPhase> runningPhase() {
        return Optional.ofNullable(phase);
    }

    /** The annotations that record this state (a removed entry maps to null, for a merge). */
    public Map<String, String> annotations() {
        Map<String, String> out = new TreeMap<>();
        out.put(REVISION_ANNOTATION, Long.toString(revision));
        out.put(PHASE_ANNOTATION, phase == null ? null : phase.stored());
        out.put(REQUEST_ANNOTATION, request.isEmpty() ? null : request);
        out.put(COMPLETED_ANNOTATION, completedRequest.isEmpty() ? null : completedRequest);
        return out;
    }
}
