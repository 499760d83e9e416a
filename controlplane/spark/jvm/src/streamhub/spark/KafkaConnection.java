package streamhub.spark;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.PBEKeySpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * One connection to one broker speaking the few non-flexible Kafka requests the reader needs (request header v1,
 * response header v0): SaslHandshake v1, SaslAuthenticate v1, Metadata v4, Fetch v5. Every socket operation has a
 * timeout; a response frame larger than the limit closes the connection instead of growing without bound.
 */
final class KafkaConnection implements AutoCloseable {
    static final short FETCH = 1;
    static final short LIST_OFFSETS = 2;
    static final short METADATA = 3;
    static final short SASL_HANDSHAKE = 17;
    static final short SASL_AUTHENTICATE = 36;
    private static final String CLIENT_ID = "streamhub-spark-jvm";
    // Fetches ask for at most TopicPartitionReader.FETCH_MAX_BYTES of records: anything far larger is not a reply.
    private static final int MAX_FRAME_BYTES = 64 * 1024 * 1024;

    final String address;
    private final Socket socket;
    private final DataInputStream in;
    private final DataOutputStream out;
    private int correlationId;

    KafkaConnection(String address, ConnectionSettings settings, int timeoutMillis) throws IOException {
        this.address = address;
        int colon = address.lastIndexOf(':');
        if (colon <= 0) {
            throw new IOException("not a host:port address: " + address);
        }
        String host = address.substring(0, colon).replace("[", "").replace("]", "");
        int port = Integer.parseInt(address.substring(colon + 1).trim());
        socket = new Socket();
        try {
            socket.connect(new InetSocketAddress(host.trim(), port), timeoutMillis);
            socket.setSoTimeout(timeoutMillis);
            socket.setTcpNoDelay(true);
            socket.setReceiveBufferSize(4 * 1024 * 1024);
            in = new DataInputStream(new BufferedInputStream(socket.getInputStream(), 256 * 1024));
            out = new DataOutputStream(socket.getOutputStream());
            if (settings.securityProtocol.startsWith("SASL")) {
                authenticate(settings);
            }
        } catch (IOException | RuntimeException error) {
            socket.close();
            throw error;
        }
    }

    /** Writes a request and returns the response body (after the correlation id) in `buffer` or a larger one. */
    Frame request(short apiKey, short version, byte[] body, Frame buffer) throws IOException {
        correlationId++;
        byte[] client = CLIENT_ID.getBytes(StandardCharsets.UTF_8);
        int headerSize = 2 + 2 + 4 + 2 + client.length;
        out.writeInt(headerSize + body.length);
        out.writeShort(apiKey);
        out.writeShort(version);
        out.writeInt(correlationId);
        out.writeShort(client.length);
        out.write(client);
        out.write(body);
        out.flush();
        int size = in.readInt();
        if (size < 4 || size > MAX_FRAME_BYTES) {
            throw new IOException("a response frame of " + size + " bytes from " + address);
        }
        int answered = in.readInt();
        if (answered != correlationId) {
            throw new IOException("the broker at " + address + " answered out of order");
        }
        Frame frame = buffer != null && buffer.data.length >= size - 4 ? buffer : new Frame(new byte[size - 4]);
        in.readFully(frame.data, 0, size - 4);
        frame.length = size - 4;
        return frame;
    }

    Frame request(short apiKey, short version, byte[] body) throws IOException {
        return request(apiKey, version, body, null);
    }

    @Override
    public void close() {
        try {
            socket.close();
        } catch (IOException ignored) {
            // Closing: nothing left to do with this connection.
        }
    }

    /** A response body, `length` bytes of `data`. */
    static final class Frame {
        final byte[] data;
        int length;

        Frame(byte[] data) {
            this.data = data;
        }
    }

    private void authenticate(ConnectionSettings settings) throws IOException {
        ByteArrayOutputStream handshake = new ByteArrayOutputStream();
        writeString(new DataOutputStream(handshake), settings.saslMechanism);
        Reader answer = new Reader(request(SASL_HANDSHAKE, (short) 1, handshake.toByteArray()));
        short error = answer.int16();
        if (error != 0) {
            throw new TopicReadError("the broker at " + address + " does not offer SASL mechanism "
                    + settings.saslMechanism + " (error " + ErrorCodes.name(error) + ")");
        }
        if (settings.saslMechanism.equals("PLAIN")) {
            String token = "\0" + settings.username + "\0" + settings.password;
            saslStep(token.getBytes(StandardCharsets.UTF_8));
            return;
        }
        new Scram(settings).run();
    }

    private byte[] saslStep(byte[] token) throws IOException {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        DataOutputStream data = new DataOutputStream(body);
        data.writeInt(token.length);
        data.write(token);
        Reader answer = new Reader(request(SASL_AUTHENTICATE, (short) 1, body.toByteArray()));
        short error = answer.int16();
        String message = answer.nullableString();
        if (error != 0) {
            // The broker's message, never the credentials.
            throw new TopicReadError("SASL authentication with " + address + " failed: "
                    + ErrorCodes.name(error) + (message == null ? "" : " (" + message + ")"));
        }
        return answer.bytes();
    }

    /** SCRAM-SHA-256/512 (RFC 5802) without channel binding, as Kafka's clients do it. */
    private final class Scram {
        private final ConnectionSettings settings;
        private final String digest;
        private final String hmac;

        Scram(ConnectionSettings settings) {
            this.settings = settings;
            boolean sha512 = settings.saslMechanism.equals("SCRAM-SHA-512");
            this.digest = sha512 ? "SHA-512" : "SHA-256";
            this.hmac = sha512 ? "HmacSHA512" : "HmacSHA256";
        }

        void run() throws IOException {
            byte[] nonceBytes = new byte[24];
            new SecureRandom().nextBytes(nonceBytes);
            String nonce = Base64.getEncoder().encodeToString(nonceBytes);
            String user = settings.username.replace("=", "=3D").replace(",", "=2C");
            String clientFirstBare = "n=" + user + ",r=" + nonce;
            String serverFirst = new String(
                    saslStep(("n,," + clientFirstBare).getBytes(StandardCharsets.UTF_8)), StandardCharsets.UTF_8);
            Map<String, String> fields = attributes(serverFirst);
            String serverNonce = fields.get("r");
            if (serverNonce == null || !serverNonce.startsWith(nonce) || !fields.containsKey("s")
                    || !fields.containsKey("i")) {
                throw new TopicReadError("SASL authentication with " + address + " failed: a malformed SCRAM reply");
            }
            try {
                byte[] salt = Base64.getDecoder().decode(fields.get("s"));
                int iterations = Integer.parseInt(fields.get("i"));
                if (iterations < 1 || iterations > 1_000_000) {
                    throw new TopicReadError("SCRAM iteration count " + iterations + " from " + address);
                }
                int bits = digest.equals("SHA-512") ? 512 : 256;
                String algorithm = digest.equals("SHA-512") ? "PBKDF2WithHmacSHA512" : "PBKDF2WithHmacSHA256";
                byte[] salted = SecretKeyFactory.getInstance(algorithm)
                        .generateSecret(new PBEKeySpec(settings.password.toCharArray(), salt, iterations, bits))
                        .getEncoded();
                byte[] clientKey = mac(salted, "Client Key");
                byte[] storedKey = MessageDigest.getInstance(digest).digest(clientKey);
                String withoutProof = "c=biws,r=" + serverNonce;
                String authMessage = clientFirstBare + "," + serverFirst + "," + withoutProof;
                byte[] signature = mac(storedKey, authMessage);
                byte[] proof = new byte[clientKey.length];
                for (int i = 0; i < proof.length; i++) {
                    proof[i] = (byte) (clientKey[i] ^ signature[i]);
                }
                String clientFinal = withoutProof + ",p=" + Base64.getEncoder().encodeToString(proof);
                String serverFinal = new String(
                        saslStep(clientFinal.getBytes(StandardCharsets.UTF_8)), StandardCharsets.UTF_8);
                byte[] expected = mac(mac(salted, "Server Key"), authMessage);
                String verifier = attributes(serverFinal).get("v");
                if (verifier == null || !MessageDigest.isEqual(expected, Base64.getDecoder().decode(verifier))) {
                    throw new TopicReadError("SASL authentication with " + address
                            + " failed: the broker's SCRAM signature does not match");
                }
            } catch (GeneralSecurityException | IllegalArgumentException error) {
                throw new TopicReadError("SASL authentication with " + address + " failed: " + error.getMessage());
            }
        }

        private byte[] mac(byte[] key, String text) throws GeneralSecurityException {
            Mac mac = Mac.getInstance(hmac);
            mac.init(new SecretKeySpec(key, hmac));
            return mac.doFinal(text.getBytes(StandardCharsets.UTF_8));
        }

        private Map<String, String> attributes(String message) {
            Map<String, String> result = new HashMap<>();
            for (String part : message.split(",")) {
                int equals = part.indexOf('=');
                if (equals == 1) {
                    result.put(part.substring(0, 1), part.substring(2));
                }
            }
            return result;
        }
    }

    static void writeString(DataOutputStream out, String value) throws IOException {
        byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
        out.writeShort(bytes.length);
        out.write(bytes);
    }

    /** Big-endian reads over a response body, every length checked against the body's end. */
    static final class Reader {
        final byte[] data;
        int position;
        final int end;

        Reader(Frame frame) {
            this(frame.data, 0, frame.length);
        }

        Reader(byte[] data, int position, int end) {
            this.data = data;
            this.position = position;
            this.end = end;
        }

        private void need(int count) throws EOFException {
            if (count < 0 || end - position < count) {
                throw new EOFException("a truncated response");
            }
        }

        byte int8() throws EOFException {
            need(1);
            return data[position++];
        }

        short int16() throws EOFException {
            need(2);
            short value = (short) (((data[position] & 0xff) << 8) | (data[position + 1] & 0xff));
            position += 2;
            return value;
        }

        int int32() throws EOFException {
            need(4);
            int value = ((data[position] & 0xff) << 24) | ((data[position + 1] & 0xff) << 16)
                    | ((data[position + 2] & 0xff) << 8) | (data[position + 3] & 0xff);
            position += 4;
            return value;
        }

        long int64() throws EOFException {
            long high = int32() & 0xffffffffL;
            return (high << 32) | (int32() & 0xffffffffL);
        }

        String nullableString() throws EOFException {
            short length = int16();
            if (length < 0) {
                return null;
            }
            need(length);
            String value = new String(data, position, length, StandardCharsets.UTF_8);
            position += length;
            return value;
        }

        byte[] bytes() throws EOFException {
            int length = int32();
            if (length < 0) {
                return new byte[0];
            }
            need(length);
            byte[] value = java.util.Arrays.copyOfRange(data, position, position + length);
            position += length;
            return value;
        }

        void skip(int count) throws EOFException {
            need(count);
            position += count;
        }
    }
}
