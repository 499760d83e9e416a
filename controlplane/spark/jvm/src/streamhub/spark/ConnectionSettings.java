package streamhub.spark;

import java.io.Serializable;
import java.util.List;

/** How executors reach the cluster: what the Python planner's connection_settings() returned. */
final class ConnectionSettings implements Serializable {
    private static final long serialVersionUID = 1L;

    final List<String> bootstrap;
    final String securityProtocol;
    final String saslMechanism;
    final String username;
    final String password;
    final boolean readCommitted;

    ConnectionSettings(List<String> bootstrap, String securityProtocol, String saslMechanism, String username,
            String password, boolean readCommitted) {
        this.bootstrap = List.copyOf(bootstrap);
        this.securityProtocol = securityProtocol;
        this.saslMechanism = saslMechanism;
        this.username = username;
        this.password = password;
        this.readCommitted = readCommitted;
    }

    /** Never the password: Spark prints partitions and factories in plans and logs. */
    @Override
    public String toString() {
        return "ConnectionSettings(" + bootstrap + ", " + securityProtocol + ", " + saslMechanism + ")";
    }
}
