package dev.fencing.nodemanager.escalation;

import dev.fencing.api.fencing.v1alpha1.AgentInvocation;
import dev.fencing.api.fencing.v1alpha1.Durations;
import dev.fencing.api.fencing.v1alpha1.ExecutionPolicy;
import dev.fencing.api.fencing.v1alpha1.FenceMethod;
import dev.fencing.api.fencing.v1alpha1.FenceStage;
import dev.fencing.api.fencing.v1alpha1.MethodRun;
import dev.fencing.api.fencing.v1alpha1.StageRun;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one fence stage against one node: each method is {@code status}, then the action, then {@code status} again,
 * and succeeds only when the last status confirms the wanted power state. {@code One}: methods in order until one
 * succeeds; {@code All}: every method runs and all must succeed. Output goes into the result with every secret value
 * replaced by {@code ***} and cut to its last {@link AgentInvocation#MAX_OUTPUT} characters; logs carry exit codes,
 * never output or arguments.
 */
public final class FenceStageExecutor {

    private static final Logger LOG = LoggerFactory.getLogger(FenceStageExecutor.class);
    /** Default bound of one agent run. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(60);

    private final FenceAgentRunner runner;
    private final SecretSource secrets;
    private final InstantSource clock;
    private final String identity;

    /**
     * @param runner   runs the agents
     * @param secrets  reads secret parameters
     * @param clock    timestamps
     * @param identity this replica, recorded as the stage's runner
     */
    public FenceStageExecutor(FenceAgentRunner runner, SecretSource secrets, InstantSource clock, String identity) {
        this.runner = runner;
        this.secrets = secrets;
        this.clock = clock;
        this.identity = identity;
    }

    /**
     * Runs {@code stage} for {@code node}.
     *
     * @param attempt     the attempt number recorded in the result
     * @param annotations the Node's annotations for {@code $(NODE_ANNOTATION:key)}
     */
    public StageRun run(FenceStage stage, PowerAction target, String node, Map<String, String> annotations,
                        int attempt) {
        Instant started = clock.instant();
        Duration timeout;
        try {
            timeout = Durations.parse("stage " + stage.name() + " timeout", stage.timeout(), DEFAULT_TIMEOUT);
        } catch (IllegalArgumentException e) {
            // The CRD's pattern refuses this; a config written around the schema still gets a clear result.
            return new StageRun(stage.name(), StageRun.FAILED, attempt, started.toString(), identity,
                    clock.instant().toString(), e.getMessage(), List.of());
        }
        List<MethodRun> methods = new ArrayList<>();
        boolean all = stage.policyOrDefault() == ExecutionPolicy.All;
        boolean succeeded = all;
        for (FenceMethod method : stage.methods()) {
            MethodRun run = runMethod(method, target, node, annotations, timeout);
            methods.add(run);
            if (all) {
                succeeded &= run.succeeded();
            } else if (run.succeeded()) {
                succeeded = true;
                break;
            }
        }
        String message = succeeded
                ? (all ? "every method" : "method " + methods.get(methods.size() - 1).name()) + " confirmed power "
                        + target.action() + (target == PowerAction.REBOOT ? poweredOnAgain(methods) : "")
                : (all ? "not every method" : "no method") + " confirmed power " + target.action();
        LOG.info("event=fence_stage_finished node={} stage={} action={} succeeded={} attempt={}", node,
                stage.name(), target.action(), succeeded, attempt);
        return new StageRun(stage.name(), succeeded ? StageRun.SUCCEEDED : StageRun.FAILED, attempt,
                started.toString(), identity, clock.instant().toString(), message, methods);
    }

    // With Reboot: whether the "on" after each confirmed off worked.
    private static String poweredOnAgain(List<MethodRun> methods) {
        boolean allOn = methods.stream().filter(MethodRun::succeeded).allMatch(m -> {
            AgentInvocation last = m.invocations().get(m.invocations().size() - 1);
            return PowerAction.ON.action().equals(last.action()) && Integer.valueOf(0).equals(last.exitCode());
        });
        return allOn ? ", then powered on again" : ", but powering on again failed: the node stays off";
    }

    private MethodRun runMethod(FenceMethod method, PowerAction target, String node, Map<String, String> annotations,
                                Duration timeout) {
        List<AgentInvocation> invocations = new ArrayList<>();
        FenceArguments.Resolved args = FenceArguments.resolve(method, "status", node, annotations, secrets);
        if (args.error() != null) {
            String now = clock.instant().toString();
            invocations.add(new AgentInvocation("status", null, now, now, null, args.error()));
            LOG.warn("event=fence_method_invalid node={} method={} agent={} error=\"{}\"", node, method.name(),
                    method.agent(), args.error());
            return new MethodRun(method.name(), method.agent(), false, invocations);
        }
        AgentInvocation before = invoke(method, "status", args, node, timeout);
        invocations.add(before);
        if (before.exitCode() == null || (before.exitCode() != 0 && before.exitCode() != 2)) {
            // The device does not answer status: the action would not be confirmed either.
            return new MethodRun(method.name(), method.agent(), false, invocations);
        }
        AgentInvocation action = invoke(method, target.action(), args, node, timeout);
        invocations.add(action);
        AgentInvocation after = invoke(method, "status", args, node, timeout);
        invocations.add(after);
        boolean ok = action.exitCode() != null && action.exitCode() == 0 && after.exitCode() != null
                && after.exitCode() == target.confirmingStatusExit();
        if (ok && target == PowerAction.REBOOT) {
            // Confirmed off: what the fencing needed. Powered on again so the node boots by itself; a failed "on"
            // leaves it off (safe) and is in the record.
            AgentInvocation on = invoke(method, PowerAction.ON.action(), args, node, timeout);
            invocations.add(on);
            if (on.exitCode() == null || on.exitCode() != 0) {
                LOG.warn("event=fence_power_on_failed node={} method={} agent={} exit={} detail=\"confirmed off; "
                        + "the node stays off until powered on (annotate the NodeFencing to run the recovery "
                        + "stage)\"", node, method.name(), method.agent(), on.exitCode());
            }
        }
        return new MethodRun(method.name(), method.agent(), ok, invocations);
    }

    private AgentInvocation invoke(FenceMethod method, String action, FenceArguments.Resolved args, String node,
                                   Duration timeout) {
        Map<String, String> arguments = new java.util.LinkedHashMap<>(args.arguments());
        arguments.put("action", action);
        Instant started = clock.instant();
        FenceAgentRunner.AgentOutcome outcome = runner.run(method.agent(), arguments, timeout);
        Instant finished = clock.instant();
        LOG.info("event=fence_agent_run node={} method={} agent={} action={} exit={} ms={}{}", node, method.name(),
                method.agent(), action, outcome.exitCode(), Duration.between(started, finished).toMillis(),
                outcome.error() == null ? "" : " error=\"" + redact(outcome.error(), args.secretValues()) + "\"");
        return new AgentInvocation(action, outcome.exitCode(), started.toString(), finished.toString(),
                tail(redact(outcome.output(), args.secretValues())),
                outcome.error() == null ? null : redact(outcome.error(), args.secretValues()));
    }

    /** {@code text} with every secret value replaced by {@code ***}. */
    static String redact(String text, List<String> secretValues) {
        if (text == null) {
            return null;
        }
        String out = text;
        for (String secret : secretValues) {
            out = out.replace(secret, "***");
        }
        return out;
    }

    private static String tail(String output) {
        if (output == null || output.isEmpty()) {
            return null;
        }
        String trimmed = output.strip();
        return trimmed.length() <= AgentInvocation.MAX_OUTPUT ? trimmed
                : trimmed.substring(trimmed.length() - AgentInvocation.MAX_OUTPUT);
    }
}
