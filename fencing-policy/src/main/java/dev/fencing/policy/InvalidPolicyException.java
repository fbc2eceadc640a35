package dev.fencing.policy;

import java.util.List;
import java.util.stream.Collectors;

/** Thrown by {@link PolicyResolver#resolve} when a spec has violations; the message lists all of them. */
public final class InvalidPolicyException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    private final transient List<Violation> violations;

    /**
     * @param violations at least one violation
     */
    public InvalidPolicyException(List<Violation> violations) {
        super(message(violations));
        this.violations = List.copyOf(violations);
    }

    /** Every violation found, in field order of the spec. */
    public List<Violation> violations() {
        return violations;
    }

    private static String message(List<Violation> violations) {
        if (violations.isEmpty()) {
            throw new IllegalArgumentException("an InvalidPolicyException needs at least one violation");
        }
        return "invalid fencing policy: "
                + violations.stream().map(Violation::toString).collect(Collectors.joining("; "));
    }
}
