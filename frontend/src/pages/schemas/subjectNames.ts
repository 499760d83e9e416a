/** Which topic a subject serves under the default TopicNameStrategy (`<topic>-key` / `<topic>-value`). */
export interface SubjectUse {
  topic: string;
  part: "key" | "value";
}

export function topicOfSubject(subject: string): SubjectUse | null {
  for (const part of ["key", "value"] as const) {
    const suffix = `-${part}`;
    if (subject.endsWith(suffix) && subject.length > suffix.length) {
      return { topic: subject.slice(0, -suffix.length), part };
    }
  }
  return null;
}

/** The console's link to a subject; the subject is one path segment, so `/` is encoded. */
export function subjectPath(cluster: number, subject: string): string {
  return `/schemas/${cluster}/${encodeURIComponent(subject)}`;
}
