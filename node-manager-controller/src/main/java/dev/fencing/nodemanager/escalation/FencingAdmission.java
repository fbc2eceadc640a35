package dev.fencing.nodemanager.escalation;

import dev.fencing.nodemanager.storm.StormGuard;
import java.time.Instant;

/** The storm limits as the escalation asks them: before a power stage or a taint, and when a fencing is over. */
public interface FencingAdmission {

    /** May {@code node} of {@code group} be fenced now? */
    StormGuard.Admission admit(String group, String node, Instant now);

    /** The fencing of {@code node} is over (record closed or failed). */
    void finished(String group, String node, Instant now);

    /**
     * {@code node} has an open record (this leader's, or one a previous leader started): its fencing is in
     * progress and counts against the concurrency limits until {@link #finished}.
     */
    void inProgress(String group, String node);

    /** No limits (a controller without storm limits configured). */
    FencingAdmission UNLIMITED = new FencingAdmission() {
        @Override
        public StormGuard.Admission admit(String group, String node, Instant now) {
            return new StormGuard.Admission(true, "no storm limits");
        }

        @Override
        public void finished(String group, String node, Instant now) {
        }

        @Override
        public void inProgress(String group, String node) {
        }
    };

    /** The storm guard's limits. */
    static FencingAdmission of(StormGuard guard) {
        return new FencingAdmission() {
            @Override
            public StormGuard.Admission admit(String group, String node, Instant now) {
                return guard.admit(group, node, now);
            }

            @Override
            public void finished(String group, String node, Instant now) {
                guard.finished(group, node, now);
            }

            @Override
            public void inProgress(String group, String node) {
                guard.adopt(group, node);
            }
        };
    }
}
