package dev.fencing.agent.control;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/** A channel that forwards everything to another one and counts {@link #resetConnectBackoff()} calls. */
final class BackoffRecordingChannel extends ManagedChannel {

    private final ManagedChannel delegate;
    private final AtomicInteger backoffResets = new AtomicInteger();

    BackoffRecordingChannel(ManagedChannel delegate) {
        this.delegate = delegate;
    }

    int backoffResets() {
        return backoffResets.get();
    }

    @Override
    public void resetConnectBackoff() {
        backoffResets.incrementAndGet();
        delegate.resetConnectBackoff();
    }

    @Override
    public ManagedChannel shutdown() {
        delegate.shutdown();
        return this;
    }

    @Override
    public boolean isShutdown() {
        return delegate.isShutdown();
    }

    @Override
    public boolean isTerminated() {
        return delegate.isTerminated();
    }

    @Override
    public ManagedChannel shutdownNow() {
        delegate.shutdownNow();
        return this;
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
        return delegate.awaitTermination(timeout, unit);
    }

    @Override
    public <Q, R> ClientCall<Q, R> newCall(MethodDescriptor<Q, R> method, CallOptions options) {
        return delegate.newCall(method, options);
    }

    @Override
    public String authority() {
        return delegate.authority();
    }
}
