package dev.fencing.agent.control;

import com.google.protobuf.InvalidProtocolBufferException;
import dev.fencing.proto.nodemanager.v1.ControllerMessage;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import dev.fencing.agent.config.StateDirectory;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Optional;
import java.util.zip.CRC32C;

/**
 * The last materialised controller config in the agent's state dir, so a restart without the controller still knows
 * its group. Layout: magic {@code "FNMCFG1\n"}, payload length (4 bytes), CRC32C of the payload (4 bytes), payload =
 * a {@link ControllerMessage} holding epoch, revision and the full config. Written through {@link StateDirectory}
 * (temp file and rename), so a reader sees the old or the new file, never a torn one.
 */
public final class ConfigStateFile {

    /** File name inside the state dir. */
    public static final String FILE_NAME = "controller-config.bin";

    private static final byte[] MAGIC = "FNMCFG1\n".getBytes(StandardCharsets.US_ASCII);
    private static final int HEADER = MAGIC.length + 8;
    private static final int MAX_PAYLOAD = 64 * 1024 * 1024;

    private final StateDirectory stateDirectory;
    private final Path file;

    /** @param stateDir the agent's state dir; created on first write */
    public ConfigStateFile(Path stateDir) {
        this.stateDirectory = new StateDirectory(stateDir);
        this.file = stateDir.resolve(FILE_NAME);
    }

    /** The file this instance reads and writes. */
    public Path path() {
        return file;
    }

    /**
     * Reads the cached config.
     *
     * @return empty when no file exists
     * @throws CorruptStateException when the file exists but cannot be trusted (says why)
     * @throws IOException when it cannot be read
     */
    public Optional<MaterialisedConfig> read() throws IOException {
        Optional<byte[]> content = stateDirectory.read(FILE_NAME);
        if (content.isEmpty()) {
            return Optional.empty();
        }
        byte[] bytes = content.get();
        if (bytes.length < HEADER || !Arrays.equals(Arrays.copyOf(bytes, MAGIC.length), MAGIC)) {
            throw new CorruptStateException(file + ": not a controller config file (bad header)");
        }
        ByteBuffer header = ByteBuffer.wrap(bytes, MAGIC.length, 8);
        int length = header.getInt();
        int crc = header.getInt();
        if (length < 0 || length > MAX_PAYLOAD || length != bytes.length - HEADER) {
            throw new CorruptStateException(file + ": payload length " + length + " does not match file size "
                    + bytes.length);
        }
        CRC32C check = new CRC32C();
        check.update(bytes, HEADER, length);
        if ((int) check.getValue() != crc) {
            throw new CorruptStateException(file + ": checksum mismatch");
        }
        try {
            ControllerMessage message = ControllerMessage.parseFrom(ByteBuffer.wrap(bytes, HEADER, length));
            if (!message.hasFull() || message.getEpoch().isEmpty()) {
                throw new CorruptStateException(file + ": payload holds no full config");
            }
            return Optional.of(MaterialisedConfig.fromFull(message));
        } catch (InvalidProtocolBufferException e) {
            throw new CorruptStateException(file + ": payload is not a ControllerMessage: " + e.getMessage());
        }
    }

    /** Writes {@code config} atomically (see {@link StateDirectory#write}). */
    public void write(MaterialisedConfig config) throws IOException {
        byte[] payload = ControllerMessage.newBuilder()
                .setEpoch(config.epoch())
                .setRevision(config.revision())
                .setFull(config.config())
                .build()
                .toByteArray();
        CRC32C crc = new CRC32C();
        crc.update(payload);
        ByteBuffer out = ByteBuffer.allocate(HEADER + payload.length);
        out.put(MAGIC).putInt(payload.length).putInt((int) crc.getValue()).put(payload);
        stateDirectory.write(FILE_NAME, out.array());
    }

    /** The state file exists but its content cannot be trusted. */
    public static final class CorruptStateException extends IOException {
        private static final long serialVersionUID = 1L;

        CorruptStateException(String message) {
            super(message);
        }
    }
}
