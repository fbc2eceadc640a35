package dev.fencing.agent.control;

import dev.fencing.proto.nodemanager.v1.AgentControlGrpc;
import dev.fencing.proto.nodemanager.v1.AgentHello;
import dev.fencing.proto.nodemanager.v1.AgentMessage;
import dev.fencing.proto.nodemanager.v1.AgentReport;
import dev.fencing.proto.nodemanager.v1.ControllerMessage;
import dev.fencing.proto.nodemanager.v1.TieBreakRequest;
import io.grpc.stub.StreamObserver;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.function.BiConsumer;

/** A test double of the controller: records what agents send and lets the test push controller messages. */
final class ScriptedAgentControl extends AgentControlGrpc.AgentControlImplBase {

    final BlockingQueue<AgentHello> hellos = new LinkedBlockingQueue<>();
    final BlockingQueue<AgentReport> reports = new LinkedBlockingQueue<>();
    final BlockingQueue<TieBreakRequest> tieBreaks = new LinkedBlockingQueue<>();
    /** What arrived, in order: "hello", "report", "final-report", "tie-break", "half-closed". */
    final java.util.List<String> events = new java.util.concurrent.CopyOnWriteArrayList<>();
    private volatile StreamObserver<ControllerMessage> current;
    private volatile BiConsumer<AgentHello, StreamObserver<ControllerMessage>> onHello = (h, o) -> { };

    void onHello(BiConsumer<AgentHello, StreamObserver<ControllerMessage>> handler) {
        this.onHello = handler;
    }

    void push(ControllerMessage message) {
        current.onNext(message);
    }

    void dropStream() {
        current.onError(io.grpc.Status.UNAVAILABLE.withDescription("test dropped the stream").asRuntimeException());
    }

    @Override
    public StreamObserver<AgentMessage> connect(StreamObserver<ControllerMessage> responseObserver) {
        current = responseObserver;
        return new StreamObserver<>() {
            @Override
            public void onNext(AgentMessage m) {
                switch (m.getKindCase()) {
                    case HELLO -> {
                        events.add("hello");
                        hellos.add(m.getHello());
                        onHello.accept(m.getHello(), responseObserver);
                    }
                    case REPORT -> {
                        events.add(m.getReport().getFinalReport() ? "final-report" : "report");
                        reports.add(m.getReport());
                    }
                    case TIE_BREAK_REQUEST -> {
                        events.add("tie-break");
                        tieBreaks.add(m.getTieBreakRequest());
                    }
                    default -> { }
                }
            }

            @Override
            public void onError(Throwable t) {
            }

            @Override
            public void onCompleted() {
                events.add("half-closed");
                responseObserver.onCompleted();
            }
        };
    }
}
