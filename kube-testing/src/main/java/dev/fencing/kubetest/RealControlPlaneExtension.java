package dev.fencing.kubetest;

import java.nio.file.Path;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * JUnit 5 access to a {@link RealControlPlane}: one instance per flavour per test JVM, started when the first test
 * class that registers it runs and stopped when the whole run ends (JUnit closes it from the root store). Tests that
 * share it isolate themselves by unique names ({@link RealControlPlane#uniqueName}).
 *
 * <pre>{@code
 * @RegisterExtension
 * static final RealControlPlaneExtension KUBE = RealControlPlaneExtension.withControllers();
 * }</pre>
 */
public final class RealControlPlaneExtension implements BeforeAllCallback, ParameterResolver {

    private static final ExtensionContext.Namespace NAMESPACE =
            ExtensionContext.Namespace.create(RealControlPlaneExtension.class);

    private final boolean controllers;
    private volatile RealControlPlane plane;

    private RealControlPlaneExtension(boolean controllers) {
        this.controllers = controllers;
    }

    /** etcd and kube-apiserver only: CRDs, validation, RBAC, TokenReview, leases. */
    public static RealControlPlaneExtension apiServerOnly() {
        return new RealControlPlaneExtension(false);
    }

    /** Also kube-controller-manager and kube-scheduler: garbage collection, DaemonSets, node lifecycle. */
    public static RealControlPlaneExtension withControllers() {
        return new RealControlPlaneExtension(true);
    }

    /** @return the started control plane (only inside tests, after {@code beforeAll}) */
    public RealControlPlane get() {
        RealControlPlane current = plane;
        if (current == null) {
            throw new IllegalStateException("the control plane starts in beforeAll; register the extension with "
                    + "@RegisterExtension on a static field");
        }
        return current;
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        String key = controllers ? "with-controllers" : "api-server-only";
        Holder holder = context.getRoot().getStore(NAMESPACE).getOrComputeIfAbsent(key, k -> new Holder(
                RealControlPlane.builder()
                        .name(key)
                        .controllerManager(controllers)
                        .scheduler(controllers)
                        .logDir(Path.of("target", "kube-logs"))
                        .start()), Holder.class);
        plane = holder.plane();
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == RealControlPlane.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        return get();
    }

    /** Closed by JUnit at the end of the run (the root store closes AutoCloseable values). */
    private record Holder(RealControlPlane plane) implements AutoCloseable {
        @Override
        public void close() {
            plane.close();
        }
    }
}
