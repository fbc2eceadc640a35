package dev.fencing.nodemanager.tiebreak;

import java.time.Duration;

/**
 * The leader's answer to one tie-break request.
 *
 * @param granted  the requesting side holds the tie
 * @param validFor lease length, counted by the agent from its request's send time (zero when refused)
 * @param reason   why (shown in agent status)
 */
public record TieBreakDecision(boolean granted, Duration validFor, String reason) {

    static TieBreakDecision refuse(String reason) {
        return new TieBreakDecision(false, Duration.ZERO, reason);
    }
}
