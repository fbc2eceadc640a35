package dev.fencing.agent.api;

import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import java.nio.file.Path;

/** Client side of the local API: a gRPC channel to an agent's Unix socket (used by the CLI and tests). */
public final class LocalApiChannel {

  private LocalApiChannel() {}

  /** Opens a plaintext channel to {@code unix://<socket>}; connection happens lazily on the first call. */
  public static ManagedChannel open(Path socket) {
    return Grpc.newChannelBuilder("unix://" + socket.toAbsolutePath(), InsecureChannelCredentials.create()).build();
  }
}
