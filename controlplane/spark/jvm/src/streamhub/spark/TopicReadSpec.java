package streamhub.spark;

import java.io.Serializable;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/** What every task of one read needs: where the cluster is, which columns, and how to treat a short log. */
final class TopicReadSpec implements PartitionReaderFactory, Serializable {
    private static final long serialVersionUID = 1L;

    final ConnectionSettings settings;
    final StructType schema;
    final String[] columns; // the source column behind each field of the schema
    final boolean failOnDataLoss;
    final long pollTimeoutMs;

    TopicReadSpec(ConnectionSettings settings, StructType schema, String[] columns, boolean failOnDataLoss,
            long pollTimeoutMs) {
        this.settings = settings;
        this.schema = schema;
        this.columns = columns;
        this.failOnDataLoss = failOnDataLoss;
        this.pollTimeoutMs = pollTimeoutMs;
    }

    @Override
    public boolean supportColumnarReads(InputPartition partition) {
        return true;
    }

    @Override
    public PartitionReader<InternalRow> createReader(InputPartition partition) {
        throw new UnsupportedOperationException("the topics JVM reader reads column batches only");
    }

    @Override
    public PartitionReader<ColumnarBatch> createColumnarReader(InputPartition partition) {
        return new TopicPartitionReader((TopicRangePartition) partition, this);
    }
}
