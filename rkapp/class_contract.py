"""Session keys shared by the live lecture's parts (issue 39): the lesson a lecturer steps through, the
class a session runs or follows, and the question on screen. One place, so that the lesson panel, the
class panel and the question box agree without importing each other."""

#: the lecturer's current lesson step's question, while there is one: {"id": str, "text": str,
#: "choices": [str, ...]} (the id is unique in the class's lifetime: the lesson's and the step's)
LESSON_QUESTION_KEY = "_rk_lesson_question"

#: the class this session belongs to: {"code": str, "role": "lecturer" | "student"}; absent: none
CLASS_KEY = "_rk_class"
