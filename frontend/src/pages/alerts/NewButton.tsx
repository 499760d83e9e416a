/** A tab's "New …" button, shown only to people who may create there. */
export function NewButton({ visible, label, onClick }: { visible: boolean; label: string; onClick: () => void }) {
  if (!visible) return null;
  return (
    <div className="actions">
      <button type="button" className="button button--primary" onClick={onClick}>
        {label}
      </button>
    </div>
  );
}
